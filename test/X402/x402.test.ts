import type { FacilitatorEmulator } from "@agent-gateway/x402-facilitator"
import { decodePaymentResponseHeader } from "@x402/core/http"
import type { PaymentRequirements } from "@x402/core/types"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AgentGateway } from "../../clients/typescript/src/index.js"
import { emailFindInput } from "../Purchasing/support.js"
import { verifyWithJose } from "../Receipts/support.js"
import { runAdminCli } from "../support/adminCli.js"
import { bearer, seedAdmin, seedAgent, seedOrg } from "../support/fixtures.js"
import { request } from "../support/server.js"
import { startWorld, topUp, type World } from "../support/world.js"
import {
  freshWallet,
  paidPost,
  PAY_TO,
  payAndPost,
  paymentRequiredOf,
  signedPayment,
  startX402World
} from "./support.js"

/**
 * x402 on the wire, against the facilitator emulator over its socket with payments signed by
 * the x402 client libraries: the 402 and its `PAYMENT-REQUIRED`, paid calls and purchases with
 * `PAYMENT-RESPONSE` and the signed record naming the payer, what is settled (read from the
 * emulated chain), the payment-identifier, the refusals, the per-payer limits; keyed
 * requests unchanged beside it; the TypeScript client paying with a wallet and no key.
 */
const CAP_UNITS = 1_000_000n
let emulator: FacilitatorEmulator
let world: World
let close: () => Promise<void>

beforeAll(async () => {
  ;({ close, emulator, world } = await startX402World("x402", {
    X402_PAYER_REQUESTS_PER_MINUTE: "40",
    X402_PAYER_DAILY_CAP_UNITS: CAP_UNITS.toString()
  }))
})

afterAll(() => close?.())

const callUrl = () => `${world.server.url}/v1/call`
const executeUrl = () => `${world.server.url}/v1/execute`
const settledTo = (payTo: string) => emulator.settlements().filter((s) => s.to.toLowerCase() === payTo.toLowerCase())

describe("asking for a payment", () => {
  it("answers 402 payment_required with PAYMENT-REQUIRED: the call's price in the asset's units", async () => {
    const answer = await paidPost(callUrl(), { endpoint: "fakeprov/ok" })
    expect(answer.status).toBe(402)
    expect(answer.json.error).toMatchObject({ code: "payment_required", retryable: false })
    expect(answer.json.error.doc_url).toMatch(/\/docs\/errors#payment_required$/)
    const required = paymentRequiredOf(answer.headers)
    expect(required.x402Version).toBe(2)
    expect(required.resource.url).toMatch(/\/v1\/call$/)
    expect(required.accepts).toHaveLength(1)
    // 10 credits at 1,000 units a credit.
    expect(required.accepts[0]).toMatchObject({
      scheme: "exact",
      network: "eip155:84532",
      asset: emulator.asset.address,
      amount: "10000",
      payTo: PAY_TO
    })
    expect(required.extensions?.["payment-identifier"]).toBeDefined()
  })

  it("answers a purchase's maximum under upto: every input passing", async () => {
    const inputs = [emailFindInput(1), emailFindInput(2)]
    const answer = await paidPost(executeUrl(), { tool: "hunter-email-finder", inputs })
    expect(answer.status).toBe(402)
    const accepted = paymentRequiredOf(answer.headers).accepts[0]!
    expect(accepted).toMatchObject({ scheme: "upto", amount: "80000" })
    expect(accepted.extra["facilitatorAddress"]).toBe(emulator.facilitatorAddress)
  })

  it("checks the request before asking: an unknown endpoint is unknown_endpoint, not 402", async () => {
    const answer = await paidPost(callUrl(), { endpoint: "nobody/nothing" })
    expect(answer.status).toBe(404)
    expect(answer.json.error.code).toBe("unknown_endpoint")
  })
})

describe("a paid call", () => {
  it("is verified, made, settled once, and answered with PAYMENT-RESPONSE and the signed record naming the payer", async () => {
    const wallet = freshWallet(emulator)
    const before = emulator.balanceOf(wallet.address)
    const { answer } = await payAndPost(callUrl(), { endpoint: "fakeprov/ok", query: { q: "x" } }, wallet)
    expect(answer.status).toBe(200)
    expect(answer.json).toMatchObject({
      endpoint: "fakeprov/ok",
      status: "succeeded",
      charged: { credits: "10" },
      data: { ok: true, answer: 42 }
    })
    const settlement = decodePaymentResponseHeader(answer.headers.get("payment-response")!)
    expect(settlement).toMatchObject({ success: true, network: "eip155:84532" })
    expect(settlement.transaction).toMatch(/^0x[0-9a-f]{64}$/)
    expect(emulator.balanceOf(wallet.address)).toBe(before - 10_000n)
    const record = answer.json.record
    // The call record keyed callers read from their call list, naming the payer, with the payment.
    expect(record).toMatchObject({
      id: answer.json.call_id,
      payer: wallet.address.toLowerCase(),
      endpoint: "fakeprov/ok",
      provider: "fakeprov",
      mode: "live",
      status: "succeeded",
      price: { credits: "10" },
      charged: { credits: "10" },
      refunded: null,
      provider_status: 200,
      request_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      response_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      payment: {
        kind: "call",
        payer: wallet.address.toLowerCase(),
        status: "settled",
        authorized_units: "10000",
        settled_units: "10000",
        transaction: settlement.transaction,
        pay_to: PAY_TO
      }
    })
    expect(record.agent_id).toBeUndefined()
    expect(await verifyWithJose(world.server.url, record)).toBe(record.signature.kid)
    // No org and no ledger for a payer: nothing was held or written there.
    const [holds] = await world.db.query(`SELECT count(*)::int AS n FROM ledger_holds`)
    expect(holds.n).toBe(0)
  })

  it("settles nothing when the provider fails", async () => {
    const wallet = freshWallet(emulator)
    const before = emulator.balanceOf(wallet.address)
    const settlementsBefore = emulator.settlements().length
    const { answer } = await payAndPost(callUrl(), { endpoint: "fakeprov/fail" }, wallet)
    expect(answer.status).toBe(200)
    expect(answer.json).toMatchObject({ status: "failed", charged: { credits: "0" } })
    expect(answer.headers.get("payment-response")).toBeNull()
    expect(answer.json.record).toMatchObject({
      status: "failed",
      charged: { credits: "0" },
      payment: { status: "nothing_due", settled_units: "0", transaction: null }
    })
    expect(emulator.balanceOf(wallet.address)).toBe(before)
    expect(emulator.settlements().length).toBe(settlementsBefore)
  })
})

describe("a paid purchase (upto)", () => {
  it("authorises the maximum and settles exactly the items that passed: 7 of 10", async () => {
    const wallet = freshWallet(emulator)
    const before = emulator.balanceOf(wallet.address)
    const inputs = Array.from({ length: 10 }, (_, i) => emailFindInput(i + 1, i < 3 ? "mock-fail" : ""))
    const { answer } = await payAndPost(executeUrl(), { tool: "hunter-email-finder", inputs }, wallet)
    expect(answer.status).toBe(200)
    expect(answer.json.counts).toMatchObject({ passed: 7, failed: 3 })
    expect(answer.json.charged.credits).toBe("280")
    const settlement = decodePaymentResponseHeader(answer.headers.get("payment-response")!)
    expect(settlement).toMatchObject({ success: true, amount: "280000" })
    expect(emulator.balanceOf(wallet.address)).toBe(before - 280_000n)
    expect(answer.json.record).toMatchObject({
      id: answer.json.receipt_id,
      payer: wallet.address.toLowerCase(),
      tool: { slug: "hunter-email-finder" },
      item_count: 10,
      charged: { credits: "280" },
      payment: { kind: "purchase", authorized_units: "400000", settled_units: "280000", scheme: "upto" }
    })
    expect(answer.json.record.items.filter((item: any) => item.status === "failed")).toHaveLength(3)
    expect(await verifyWithJose(world.server.url, answer.json.record)).toBe(answer.json.record.signature.kid)
  })

  it("settles 0 when no item passes", async () => {
    const wallet = freshWallet(emulator)
    const before = emulator.balanceOf(wallet.address)
    const inputs = [emailFindInput(1, "mock-fail"), emailFindInput(2, "mock-fail")]
    const { answer } = await payAndPost(executeUrl(), { tool: "hunter-email-finder", inputs }, wallet)
    expect(answer.status).toBe(200)
    expect(answer.json.error.code).toBe("check_failed")
    const settlement = decodePaymentResponseHeader(answer.headers.get("payment-response")!)
    expect(settlement).toMatchObject({ success: true, amount: "0" })
    expect(emulator.balanceOf(wallet.address)).toBe(before)
  })
})

describe("the payment-identifier", () => {
  it("20 requests at once with the same payment settle once, and each answers the first answer", async () => {
    const wallet = freshWallet(emulator)
    const body = { endpoint: "fakeprov/slow" }
    const asked = await paidPost(callUrl(), body)
    const payment = await signedPayment(paymentRequiredOf(asked.headers), wallet, { paymentId: "pay_same_twenty_0001" })
    const answers = await Promise.all(Array.from({ length: 20 }, () => paidPost(callUrl(), body, payment)))
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200))
    expect(new Set(answers.map((a) => a.json.call_id)).size).toBe(1)
    expect(new Set(answers.map((a) => a.headers.get("payment-response"))).size).toBe(1)
    expect(settledTo(PAY_TO).filter((s) => s.from.toLowerCase() === wallet.address.toLowerCase())).toHaveLength(1)
    const [rows] = await world.db.query(
      `SELECT count(*)::int AS n FROM x402_payments WHERE payer = $1`,
      [wallet.address.toLowerCase()]
    )
    expect(rows.n).toBe(1)
  })

  it("the same id and request with a new authorisation (a client's retry) answers the first answer, settling nothing more", async () => {
    const wallet = freshWallet(emulator)
    const body = { endpoint: "fakeprov/ok" }
    const first = await payAndPost(callUrl(), body, wallet, { paymentId: "pay_retry_new_auth_01" })
    expect(first.answer.status).toBe(200)
    const before = emulator.balanceOf(wallet.address)
    const seen = world.fake.seen.length
    const retry = await payAndPost(callUrl(), body, wallet, { paymentId: "pay_retry_new_auth_01" })
    expect(retry.payment.payload).not.toEqual(first.payment.payload)
    expect(retry.answer.status).toBe(200)
    expect(retry.answer.json.call_id).toBe(first.answer.json.call_id)
    expect(retry.answer.headers.get("payment-response")).toBe(first.answer.headers.get("payment-response"))
    expect(emulator.balanceOf(wallet.address)).toBe(before)
    expect(world.fake.seen.length).toBe(seen)
    // Another wallet cannot take the first payer's answer with the same identifier.
    const other = freshWallet(emulator)
    const stranger = await payAndPost(callUrl(), body, other, { paymentId: "pay_retry_new_auth_01" })
    expect(stranger.answer.json.call_id).not.toBe(first.answer.json.call_id)
  })

  it("the same id with another request answers 409 idempotency_conflict", async () => {
    const wallet = freshWallet(emulator)
    const { answer: first } = await payAndPost(callUrl(), { endpoint: "fakeprov/ok" }, wallet, {
      paymentId: "pay_conflict_00000001"
    })
    expect(first.status).toBe(200)
    const { answer: second } = await payAndPost(callUrl(), { endpoint: "fakeprov/ok", query: { q: "other" } }, wallet, {
      paymentId: "pay_conflict_00000001"
    })
    expect(second.status).toBe(409)
    expect(second.json.error.code).toBe("idempotency_conflict")
  })
})

describe("refused payments", () => {
  const refusedWith = async (
    change: (accepted: PaymentRequirements) => PaymentRequirements,
    code: string
  ) => {
    const wallet = freshWallet(emulator)
    const before = emulator.balanceOf(wallet.address)
    const seen = world.fake.seen.length
    const { answer } = await payAndPost(callUrl(), { endpoint: "fakeprov/ok" }, wallet, { change })
    expect(answer.json.error.code).toBe(code)
    expect(answer.status).toBe(code === "payment_invalid" ? 402 : 409)
    // Refused before the provider was called, nothing moved, and what would be taken is said again.
    expect(world.fake.seen.length).toBe(seen)
    expect(emulator.balanceOf(wallet.address)).toBe(before)
    if (code === "payment_invalid") expect(paymentRequiredOf(answer.headers).accepts[0]!.payTo).toBe(PAY_TO)
    return answer
  }

  it("a wrong payee", async () => {
    const answer = await refusedWith(
      (r) => ({ ...r, payTo: "0x2222222222222222222222222222222222222222" }),
      "payment_invalid"
    )
    expect(answer.json.error.message).toContain("payee")
  })
  it("a wrong network", async () => {
    const answer = await refusedWith((r) => ({ ...r, network: "eip155:8453" }), "payment_invalid")
    expect(answer.json.error.message).toContain("network")
  })
  it("a wrong asset", async () => {
    const answer = await refusedWith(
      (r) => ({ ...r, asset: "0x3333333333333333333333333333333333333333" }),
      "payment_invalid"
    )
    expect(answer.json.error.message).toContain("asset")
  })
  it("an amount below the price", async () => {
    const answer = await refusedWith((r) => ({ ...r, amount: "9999" }), "payment_invalid")
    expect(answer.json.error.message).toContain("below the price")
  })
  it("an expired authorisation (the facilitator's verdict)", async () => {
    const answer = await refusedWith((r) => ({ ...r, maxTimeoutSeconds: 1 }), "payment_invalid")
    expect(answer.json.error.message).toContain("valid_before")
  })

  it("a forged signature (the facilitator's verdict)", async () => {
    const wallet = freshWallet(emulator)
    const asked = await paidPost(callUrl(), { endpoint: "fakeprov/ok" })
    const payment = await signedPayment(paymentRequiredOf(asked.headers), wallet)
    const inner = payment.payload as { signature: string }
    const forged = {
      ...payment,
      payload: {
        ...payment.payload,
        signature: `${inner.signature.slice(0, -4)}${inner.signature.endsWith("00") ? "11" : "00"}1b`
      }
    }
    const answer = await paidPost(callUrl(), { endpoint: "fakeprov/ok" }, forged)
    expect(answer.status).toBe(402)
    expect(answer.json.error.code).toBe("payment_invalid")
    expect(answer.json.error.message).toContain("signature")
  })

  it("a replayed authorisation: once unsettled (payment_replayed), once settled (the chain's nonce)", async () => {
    const wallet = freshWallet(emulator)
    const failed = await payAndPost(callUrl(), { endpoint: "fakeprov/fail" }, wallet)
    expect(failed.answer.status).toBe(200)
    const again = await paidPost(callUrl(), { endpoint: "fakeprov/fail" }, failed.payment)
    expect(again.status).toBe(409)
    expect(again.json.error.code).toBe("payment_replayed")

    const paid = await payAndPost(callUrl(), { endpoint: "fakeprov/ok" }, wallet)
    expect(paid.answer.status).toBe(200)
    const replayed = await paidPost(callUrl(), { endpoint: "fakeprov/ok" }, paid.payment)
    expect(replayed.status).toBe(402)
    expect(replayed.json.error.code).toBe("payment_invalid")
    expect(replayed.json.error.message).toContain("nonce")
  })

  it("a PAYMENT-SIGNATURE that is not a payment", async () => {
    const answer = await request(callUrl(), {
      method: "POST",
      body: { endpoint: "fakeprov/ok" },
      headers: { "payment-signature": "not base64 json" }
    })
    expect(answer.status).toBe(402)
    expect(answer.json.error.code).toBe("payment_invalid")
  })
})

describe("per-payer limits", () => {
  it("a day's spend cap: a payment past it is refused payer_spend_cap before the provider is called", async () => {
    const wallet = freshWallet(emulator)
    // 1,000,000 units a day; a purchase of 25 items at 40 credits authorises 1,000,000.
    const inputs = Array.from({ length: 25 }, (_, i) => emailFindInput(i + 1))
    const { answer: first } = await payAndPost(executeUrl(), { tool: "hunter-email-finder", inputs }, wallet)
    expect(first.status).toBe(200)
    const { answer } = await payAndPost(callUrl(), { endpoint: "fakeprov/ok" }, wallet)
    expect(answer.status).toBe(429)
    expect(answer.json.error).toMatchObject({ code: "payer_spend_cap", retryable: true })
    const untilMidnight = Math.ceil(
      (Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1) - Date.now()) / 1000
    )
    expect(Math.abs(Number(answer.headers.get("retry-after")) - untilMidnight)).toBeLessThanOrEqual(5)
  })

  it("requests a minute per payer address: rate_limited past X402_PAYER_REQUESTS_PER_MINUTE", async () => {
    const wallet = freshWallet(emulator)
    const asked = await paidPost(callUrl(), { endpoint: "fakeprov/fail" })
    const required = paymentRequiredOf(asked.headers)
    // 81 requests within well under a minute span at most two windows of 40, so at least one
    // is over its window's limit.
    const answers: Array<Awaited<ReturnType<typeof paidPost>>> = []
    for (let batch = 0; batch < 9; batch++) {
      const payments = await Promise.all(Array.from({ length: 9 }, () => signedPayment(required, wallet)))
      answers.push(
        ...await Promise.all(payments.map((payment) => paidPost(callUrl(), { endpoint: "fakeprov/fail" }, payment)))
      )
    }
    const limited = answers.filter((a) => a.status === 429)
    expect(limited.length).toBeGreaterThanOrEqual(1)
    expect(limited.length).toBeLessThanOrEqual(41)
    expect(limited[0]!.json.error.code).toBe("rate_limited")
    expect(Number(limited[0]!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    expect(Number(limited[0]!.headers.get("retry-after"))).toBeLessThanOrEqual(60)
    expect(answers.every((a) => a.status === 200 || a.status === 429)).toBe(true)
  })
})

describe("keyed requests beside x402", () => {
  it("an agent key is served exactly as without x402: no payment asked, no PAYMENT-RESPONSE", async () => {
    const org = await seedOrg(world.db)
    await topUp(world, org.orgId, 10_000n)
    const agent = await seedAgent(world.db, org.orgId, { mode: "live" })
    const answer = await request(callUrl(), {
      method: "POST",
      headers: bearer(agent.key),
      body: { endpoint: "fakeprov/ok" }
    })
    expect(answer.status).toBe(200)
    expect(answer.json.status).toBe("succeeded")
    expect(answer.json.record).toBeUndefined()
    expect(answer.headers.get("payment-response")).toBeNull()
    expect(answer.headers.get("payment-required")).toBeNull()
  })

  it("a key that is not valid stays 401 unauthenticated", async () => {
    const answer = await request(callUrl(), {
      method: "POST",
      headers: { authorization: "Bearer sk_live_nope" },
      body: { endpoint: "fakeprov/ok" }
    })
    expect(answer.status).toBe(401)
    expect(answer.json.error.code).toBe("unauthenticated")
  })
})

/**
 * The TypeScript client given a wallet and no key: asked to pay, it pays, and gets the answer
 * with the settlement (`payment`) and the signed record naming its wallet (`record`); a retry
 * under its idempotency key (the payment-identifier) answers the first purchase, settling once.
 */
describe("the TypeScript client paying the service", () => {
  it("calls and buys with a wallet, no key: paid, settled, and answered with the payer's signed record", async () => {
    const wallet = freshWallet(emulator)
    const before = emulator.balanceOf(wallet.address)
    const gateway = new AgentGateway({ baseUrl: world.server.url, payer: wallet, apiKey: "" })

    const call = await gateway.call({ endpoint: "fakeprov/ok" })
    expect(call).toMatchObject({ status: "succeeded", data: { ok: true, answer: 42 } })
    expect(call.payment).toMatchObject({ success: true, network: "eip155:84532" })
    expect(call.record).toMatchObject({ payer: wallet.address.toLowerCase(), payment: { status: "settled" } })
    expect(emulator.balanceOf(wallet.address)).toBe(before - 10_000n)

    const inputs = [emailFindInput(1), emailFindInput(2, "mock-fail")]
    const order = { tool: "hunter-email-finder", inputs, idempotency_key: "order-client-000001" }
    const bought = await gateway.execute(order)
    if (bought.status !== "done") throw new Error("two inputs answer at once")
    expect(bought.counts).toMatchObject({ passed: 1, failed: 1 })
    expect(bought.payment).toMatchObject({ success: true, amount: "40000" })
    expect(bought.record).toMatchObject({ payer: wallet.address.toLowerCase(), payment: { settled_units: "40000" } })
    expect(emulator.balanceOf(wallet.address)).toBe(before - 10_000n - 40_000n)

    // The same order again under its key: the first purchase's answer, nothing settled twice.
    const again = await gateway.execute(order)
    if (again.status !== "done") throw new Error("two inputs answer at once")
    expect(again.receipt_id).toBe(bought.receipt_id)
    expect(emulator.balanceOf(wallet.address)).toBe(before - 10_000n - 40_000n)
  })
})

describe("administrators", () => {
  it("see x402 revenue and every payment, over /admin and npm run admin, exportable as CSV and JSON Lines", async () => {
    const wallet = freshWallet(emulator)
    const { answer } = await payAndPost(callUrl(), { endpoint: "fakeprov/ok" }, wallet)
    expect(answer.status).toBe(200)
    const [settled] = await world.db.query(
      `SELECT COALESCE(SUM(settled_units), 0)::text AS units, count(*)::int AS n FROM x402_payments WHERE status = 'settled'`
    )
    const admin = await seedAdmin(world.db)
    const revenue = await request(`${world.server.url}/admin/x402/revenue`, { headers: bearer(admin.token) })
    expect(revenue.status).toBe(200)
    expect(revenue.json.settled_units).toBe(settled.units)
    expect(revenue.json.by_status.find((s: any) => s.status === "settled").payments).toBe(settled.n)
    expect(revenue.json.by_day.some((d: any) => d.kind === "call" && d.payers >= 1)).toBe(true)

    const csv = await request(`${world.server.url}/admin/x402/payments/export`, { headers: bearer(admin.token) })
    expect(csv.status).toBe(200)
    expect(csv.headers.get("content-type")).toContain("text/csv")
    const lines = csv.text.trim().split("\r\n")
    expect(lines[0]).toMatch(/^id,created_at,kind,payer,/)
    expect(lines.some((line) => line.includes(wallet.address.toLowerCase()) && line.includes(",settled,"))).toBe(true)
    const jsonl = await request(`${world.server.url}/admin/x402/payments/export?format=jsonl`, {
      headers: bearer(admin.token)
    })
    const mine = jsonl.text.trim().split("\n").map((line) => JSON.parse(line))
      .filter((row) => row.payer === wallet.address.toLowerCase())
    expect(mine).toEqual([expect.objectContaining({ kind: "call", status: "settled", settled_units: "10000" })])

    const refused = await request(`${world.server.url}/admin/x402/revenue`)
    expect(refused.status).toBe(401)

    const cli = await runAdminCli({ DATABASE_URL: world.db.url }, ["x402", "revenue"])
    expect(cli.code).toBe(0)
    expect(JSON.parse(cli.stdout).settled_units).toBe(settled.units)
    const exported = await runAdminCli({ DATABASE_URL: world.db.url }, ["x402", "export", "--format", "jsonl"])
    expect(exported.code).toBe(0)
    expect(exported.stdout.split("\n").filter((line) => line.includes(wallet.address.toLowerCase()))).toHaveLength(1)
  })
})

describe("x402 off (the default)", () => {
  it("a keyless call is 401 unauthenticated exactly as before", async () => {
    const off = await startWorld("x402off", { provider: true })
    try {
      for (const path of ["/v1/call", "/v1/execute"]) {
        const answer = await request(`${off.server.url}${path}`, { method: "POST", body: { endpoint: "fakeprov/ok" } })
        expect(answer.status).toBe(401)
        expect(answer.json.error.code).toBe("unauthenticated")
        expect(answer.headers.get("payment-required")).toBeNull()
      }
    } finally {
      await off.close()
    }
  })
})
