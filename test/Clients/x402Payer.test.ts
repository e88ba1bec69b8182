import { type FacilitatorEmulator, startFacilitatorEmulator, testWallet } from "@agent-gateway/x402-facilitator"
import {
  decodePaymentSignatureHeader,
  encodePaymentRequiredHeader,
  encodePaymentResponseHeader,
  HTTPFacilitatorClient
} from "@x402/core/http"
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from "@x402/core/types"
import { declarePaymentIdentifierExtension, extractPaymentIdentifier } from "@x402/extensions/payment-identifier"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { generatePrivateKey } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AgentGateway, type ClientOptions, isServiceError } from "../../clients/typescript/src/index.js"

/**
 * The TypeScript client paying per request with x402: against a small server that answers 402
 * with `PAYMENT-REQUIRED` as the service does, then verifies the `PAYMENT-SIGNATURE` it gets and
 * settles it with the facilitator emulator (real signatures, real `HTTPFacilitatorClient`), and
 * answers `PAYMENT-RESPONSE`. The client signs with the emulator's funded test wallet.
 */
let emulator: FacilitatorEmulator
let facilitator: HTTPFacilitatorClient
const payTo = "0x000000000000000000000000000000000000402a"

beforeAll(async () => {
  emulator = await startFacilitatorEmulator()
  facilitator = new HTTPFacilitatorClient({ url: emulator.url })
})
afterAll(() => emulator.close())

interface Seen {
  readonly path: string
  readonly body: Record<string, unknown>
  readonly payment: PaymentPayload | undefined
}

const callResult = {
  call_id: "c1",
  endpoint: "acme/lookup",
  provider: "acme",
  status: "succeeded",
  price: { credits: "25", usd: "0.025" },
  charged: { credits: "25", usd: "0.025" },
  latency_ms: 12,
  provider_status: 200,
  data: { ok: true }
}
const executeResult = {
  status: "done",
  receipt_id: "r1",
  mode: "live",
  tool: { id: "7f1c1a52-6a3e-4f0e-9b1d-2c8f4a0e9d11", slug: "s", name: "n", provider: "p" },
  item_count: 3,
  charged: { credits: "80", usd: "0.080" },
  counts: { passed: 2, partial: 0, failed: 1, expired: 0, pending: 0 },
  fallback_used: false,
  items: []
}

/**
 * A service that wants payment: `exact` 25,000 units for a call, `upto` 120,000 for a purchase
 * of which it settles 80,000 (the items that passed). `failPaidOnce` answers the first paid
 * request a retryable 503 after verifying it; `settlementHeader` replaces `PAYMENT-RESPONSE`.
 */
const payingService = async (
  options: { readonly failPaidOnce?: boolean; readonly settlementHeader?: string } = {}
) => {
  const seen: Array<Seen> = []
  let failOnce = options.failPaidOnce ?? false
  const requirementsFor = (path: string): PaymentRequirements => ({
    scheme: path === "/v1/execute" ? "upto" : "exact",
    network: "eip155:84532",
    asset: emulator.asset.address,
    amount: path === "/v1/execute" ? "120000" : "25000",
    payTo,
    maxTimeoutSeconds: 300,
    extra: path === "/v1/execute"
      ? { facilitatorAddress: emulator.facilitatorAddress }
      : { name: emulator.asset.name, version: emulator.asset.version }
  })
  const server = http.createServer((req, res) => {
    let raw = ""
    req.on("data", (chunk) => (raw += chunk))
    req.on("end", async () => {
      const path = new URL(req.url ?? "/", "http://x").pathname
      const signature = req.headers["payment-signature"]
      const payment = typeof signature === "string" ? decodePaymentSignatureHeader(signature) : undefined
      seen.push({ path, body: raw.length > 0 ? JSON.parse(raw) : {}, payment })
      const requirements = requirementsFor(path)
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { "content-type": "application/json", ...headers })
        res.end(JSON.stringify(body))
      }
      if (payment === undefined) {
        const required: PaymentRequired = {
          x402Version: 2,
          resource: { url: `http://service${path}` },
          accepts: [requirements],
          extensions: { "payment-identifier": declarePaymentIdentifierExtension(true) }
        }
        return json(402, {
          error: { code: "payment_required", message: "Pay", doc_url: "http://x/docs/errors", retryable: false }
        }, {
          "payment-required": encodePaymentRequiredHeader(required)
        })
      }
      const verified = await facilitator.verify(payment, requirements)
      if (!verified.isValid) {
        return json(402, {
          error: { code: "payment_invalid", message: verified.invalidReason ?? "", doc_url: "x", retryable: false }
        })
      }
      if (failOnce) {
        failOnce = false
        return json(503, {
          error: { code: "service_unavailable", message: "later", doc_url: "x", retryable: true }
        }, { "retry-after": "0" })
      }
      const actual = path === "/v1/execute" ? { ...requirements, amount: "80000" } : requirements
      const settled = await facilitator.settle(payment, actual)
      json(200, path === "/v1/execute" ? executeResult : callResult, {
        "payment-response": options.settlementHeader ?? encodePaymentResponseHeader(settled)
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { url, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

const keyless = (url: string, options: ClientOptions = {}) =>
  new AgentGateway({ baseUrl: url, payer: testWallet(), apiKey: undefined, sleep: async () => {}, ...options })

describe("the TypeScript client paying with x402", () => {
  it("answers a 402 by paying exactly what it asks and sending the call once more, with no key", async () => {
    const service = await payingService()
    try {
      const before = emulator.balanceOf(testWallet().address)
      const answer = await keyless(service.url).call({ endpoint: "acme/lookup", body: { q: "x" } })

      expect(answer.status).toBe("succeeded")
      expect(answer.payment).toMatchObject({ success: true, network: "eip155:84532", payer: testWallet().address })
      expect(answer.payment?.transaction).toMatch(/^0x[0-9a-f]{64}$/)
      expect(emulator.balanceOf(testWallet().address)).toBe(before - 25_000n)

      expect(service.seen.map((s) => [s.path, s.payment === undefined])).toEqual([["/v1/call", true], [
        "/v1/call",
        false
      ]])
      // The same request, paid: the body unchanged, the payment for what was asked, with an identifier.
      const [unpaid, paid] = service.seen
      expect(paid!.body).toEqual(unpaid!.body)
      expect(paid!.payment!.accepted).toMatchObject({ scheme: "exact", amount: "25000", payTo })
      expect(extractPaymentIdentifier(paid!.payment!)).toMatch(/^ts-[0-9a-f-]{36}$/)
    } finally {
      await service.close()
    }
  })

  it("pays a purchase upto its maximum, its idempotency key the payment-identifier, and reports the amount settled", async () => {
    const service = await payingService()
    try {
      const before = emulator.balanceOf(testWallet().address)
      const answer = await keyless(service.url).execute({
        tool: "s",
        inputs: [{ a: "1" }, { a: "2" }, { a: "3" }],
        idempotency_key: "buy-0123456789abcdef"
      })
      expect(answer.status).toBe("done")
      expect(answer.payment).toMatchObject({ success: true, amount: "80000" })
      expect(emulator.balanceOf(testWallet().address)).toBe(before - 80_000n)
      const paid = service.seen[1]!
      expect(paid.payment!.accepted).toMatchObject({ scheme: "upto", amount: "120000" })
      expect(extractPaymentIdentifier(paid.payment!)).toBe("buy-0123456789abcdef")
      expect(paid.body["idempotency_key"]).toBe("buy-0123456789abcdef")
    } finally {
      await service.close()
    }
  })

  it("keeps one payment-identifier over the retries of one call, and makes one per call", async () => {
    const service = await payingService({ failPaidOnce: true })
    try {
      const gateway = keyless(service.url)
      const first = await gateway.execute({ tool: "s", inputs: [{ a: "1" }] })
      expect(first.payment).toMatchObject({ success: true })
      const paid = service.seen.filter((s) => s.payment !== undefined)
      expect(paid).toHaveLength(2)
      const ids = paid.map((s) => extractPaymentIdentifier(s.payment!))
      expect(ids[0]).toBe(ids[1])
      expect(ids[0]).toBe(paid[0]!.body["idempotency_key"])

      await gateway.call({ endpoint: "acme/lookup" })
      await gateway.call({ endpoint: "acme/lookup" })
      const callIds = service.seen.filter((s) => s.path === "/v1/call" && s.payment !== undefined).map((s) =>
        extractPaymentIdentifier(s.payment!)
      )
      expect(callIds).toHaveLength(2)
      expect(callIds[0]).not.toBe(callIds[1])
    } finally {
      await service.close()
    }
  })

  it("keeps the answer of a paid call whose PAYMENT-RESPONSE does not decode, without a payment", async () => {
    const service = await payingService({ settlementHeader: "not base64!" })
    try {
      const answer = await keyless(service.url).call({ endpoint: "acme/lookup" })
      expect(answer.status).toBe("succeeded")
      expect(answer.payment).toBeUndefined()
    } finally {
      await service.close()
    }
  })

  it("refuses to pay more than its spending limit allows, and sends nothing more", async () => {
    const service = await payingService()
    try {
      const gateway = keyless(service.url, { spendControls: { maxAmountPerPayment: "$0.01" } })
      const error = await gateway.call({ endpoint: "acme/lookup" }).then(() => undefined, (e: unknown) => e)
      expect(isServiceError(error, "payment_failed")).toBe(true)
      expect((error as { retryable: boolean }).retryable).toBe(false)
      expect(service.seen).toHaveLength(1)
    } finally {
      await service.close()
    }
  })

  it("answers the service's 402 when the payment is refused: a wallet without the funds", async () => {
    const service = await payingService()
    try {
      const gateway = keyless(service.url, { payer: testWallet(generatePrivateKey()) })
      const error = await gateway.call({ endpoint: "acme/lookup" }).then(() => undefined, (e: unknown) => e)
      expect(error).toMatchObject({ status: 402 })
      // One payment, not a loop: the unpaid try and the paid one.
      expect(service.seen).toHaveLength(2)
    } finally {
      await service.close()
    }
  })

  it("needs a key or a payer, and a payer's idempotency key must be a payment-identifier", async () => {
    const saved = process.env["SERVICE_API_KEY"]
    delete process.env["SERVICE_API_KEY"]
    try {
      expect(() => new AgentGateway({ baseUrl: "http://127.0.0.1:9" })).toThrow(/No API key/)
      const service = await payingService()
      try {
        await expect(keyless(service.url).execute({ tool: "s", inputs: [{ a: "1" }], idempotency_key: "short" }))
          .rejects
          .toThrow(/payment-identifier/)
        expect(service.seen).toHaveLength(0)
      } finally {
        await service.close()
      }
    } finally {
      if (saved !== undefined) process.env["SERVICE_API_KEY"] = saved
    }
  })
})
