import { type FacilitatorEmulator, startFacilitatorEmulator, testWallet } from "@agent-gateway/x402-facilitator"
import { x402Client } from "@x402/core/client"
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http"
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from "@x402/core/types"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { UptoEvmScheme } from "@x402/evm/upto/client"
import { appendPaymentIdentifierToExtensions } from "@x402/extensions/payment-identifier"
import * as http from "node:http"
import { generatePrivateKey, type PrivateKeyAccount } from "viem/accounts"
import { startFakeToolProvider } from "../support/fakeToolProvider.js"
import { request } from "../support/server.js"
import { startWorld } from "../support/world.js"

/**
 * A paying agent, as the x402 client libraries make one: the service's `PAYMENT-REQUIRED`
 * read, a payment signed with the wallet by `x402Client` and the `@x402/evm` schemes, sent as
 * `PAYMENT-SIGNATURE`. `change` alters the requirements before signing (a wrong payee, network,
 * asset or amount, a short validity), as a faulty or hostile client would.
 */
export const signedPayment = async (
  required: PaymentRequired,
  wallet: PrivateKeyAccount,
  options: { change?: (accepted: PaymentRequirements) => PaymentRequirements; paymentId?: string } = {}
): Promise<PaymentPayload> => {
  const accepted = (options.change ?? ((r) => r))(required.accepts[0]!)
  const payload = await new x402Client()
    .setSpendControls(false)
    .register(accepted.network, new ExactEvmScheme(wallet))
    .register(accepted.network, new UptoEvmScheme(wallet))
    .createPaymentPayload({ ...required, accepts: [accepted] })
  return options.paymentId === undefined
    ? payload
    : { ...payload, extensions: appendPaymentIdentifierToExtensions({ ...payload.extensions }, options.paymentId) }
}

export const paymentRequiredOf = (headers: Headers): PaymentRequired => {
  const header = headers.get("payment-required")
  if (header === null) throw new Error("no PAYMENT-REQUIRED header")
  return decodePaymentRequiredHeader(header)
}

/** POSTs without a key; with a payment when one is given. */
export const paidPost = (url: string, body: unknown, payment?: PaymentPayload) =>
  request(url, {
    method: "POST",
    body,
    headers: payment === undefined ? {} : { "payment-signature": encodePaymentSignatureHeader(payment) }
  })

/** Asks for the price, then pays it: the 402 first, the paid answer second. */
export const payAndPost = async (
  url: string,
  body: unknown,
  wallet: PrivateKeyAccount,
  options: Parameters<typeof signedPayment>[2] = {}
) => {
  const asked = await paidPost(url, body)
  if (asked.status !== 402) throw new Error(`expected 402, got ${asked.status}: ${asked.text}`)
  const payment = await signedPayment(paymentRequiredOf(asked.headers), wallet, options)
  return { payment, answer: await paidPost(url, body, payment) }
}

/** A wallet of its own, funded on the emulator (so per-payer limits and balances are its own). */
export const freshWallet = (emulator: FacilitatorEmulator, units = 100_000_000n) => {
  const wallet = testWallet(generatePrivateKey())
  emulator.fund(wallet.address, units)
  return wallet
}

/**
 * One upstream for the two fake providers (the gateway's, the tools'), routing by the
 * provider's path: `PROVIDERS_UPSTREAM` names one address.
 */
export const startUpstreamRouter = async () => {
  const targets = { tools: "", other: "" }
  const toolPrefixes = ["/hunter/", "/firecrawl/"]
  const server = http.createServer((req, res) => {
    const base = toolPrefixes.some((prefix) => (req.url ?? "").startsWith(prefix)) ? targets.tools : targets.other
    const forwarded = http.request(`${base}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    forwarded.on("error", () => res.destroy())
    req.pipe(forwarded)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    targets,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** Where the suites' payments go. */
export const PAY_TO = "0x00000000000000000000000000000000000c0ffe"

/**
 * The service with x402 on against the facilitator emulator, live purchases against the fake
 * tools' provider and calls against the fake data provider (behind one upstream router);
 * `env` adds settings. `close` ends all of it.
 */
export const startX402World = async (label: string, env: Record<string, string> = {}) => {
  const emulator = await startFacilitatorEmulator()
  const tools = await startFakeToolProvider()
  const router = await startUpstreamRouter()
  router.targets.tools = tools.url
  const world = await startWorld(label, {
    provider: true,
    env: {
      X402_ENABLED: "true",
      X402_FACILITATOR_URL: emulator.url,
      X402_PAY_TO: PAY_TO,
      PROVIDERS_UPSTREAM: router.url,
      LIVE_EXECUTE_ENABLED: "true",
      PROVIDER_HUNTER_API_KEY: "hunter-secret",
      ...env
    }
  })
  router.targets.other = world.fake.url
  const close = async () => {
    await world.close()
    await router.close()
    await tools.close()
    await emulator.close()
  }
  return { emulator, world, close }
}
