import { type FacilitatorEmulator, startFacilitatorEmulator } from "@agent-gateway/x402-facilitator"
import { decodePaymentResponseHeader } from "@x402/core/http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ChildService, killChildService, startChildService } from "../support/childService.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { eventually } from "../support/eventually.js"
import { type FakeProvider, seedTestCatalogue, startFakeProvider } from "../support/fakeProvider.js"
import { freshWallet, paidPost, paymentRequiredOf, signedPayment } from "./support.js"

/**
 * The service as a child process (as `npm start` runs it), killed with SIGKILL after the
 * provider answered a paid call and its outcome was recorded, while the settlement is on its
 * way (the emulator holds `/settle` unanswered), then started again on the same database.
 * The sweeper's rule: a recorded outcome is settled, once, while its authorisation has more
 * than 10 s left; one whose authorisation ends sooner is abandoned and nothing is settled.
 */
const PAY_TO = "0x00000000000000000000000000000000000c0ffe"
let db: TestDatabase
let fake: FakeProvider
let emulator: FacilitatorEmulator

beforeAll(async () => {
  db = await createTestDatabase("x402crash")
  fake = await startFakeProvider()
  emulator = await startFacilitatorEmulator()
})

afterAll(async () => {
  await emulator?.close()
  await fake?.close()
  await db?.drop()
})

const statusOf = async (payer: string) =>
  (await db.query(`SELECT status FROM x402_payments WHERE payer = $1`, [payer.toLowerCase()]))[0]?.status

describe("a kill between the provider's answer and the settlement", () => {
  it("ends as the rule says: settled once while the authorisation lasts, abandoned when it does not", async () => {
    const env = {
      DATABASE_URL: db.url,
      PROVIDERS_UPSTREAM: fake.url,
      X402_ENABLED: "true",
      X402_FACILITATOR_URL: emulator.url,
      X402_PAY_TO: PAY_TO,
      X402_FACILITATOR_TIMEOUT_MS: "2000",
      X402_SWEEP_INTERVAL_MS: "300"
    }
    let child: ChildService = await startChildService(env)
    try {
      await seedTestCatalogue(db)
      const body = { endpoint: "fakeprov/ok" }
      const required = paymentRequiredOf((await paidPost(`${child.url}/v1/call`, body)).headers)
      const lasting = freshWallet(emulator)
      const short = freshWallet(emulator)
      const lastingPayment = await signedPayment(required, lasting, { paymentId: "pay_crash_lasting_01" })
      // Signed to lapse 12 s from now: past the sweeper's 10 s margin by the time it may take it.
      const shortPayment = await signedPayment(required, short, {
        change: (accepted) => ({ ...accepted, maxTimeoutSeconds: 12 })
      })

      for (const [wallet, payment] of [[lasting, lastingPayment], [short, shortPayment]] as const) {
        emulator.trouble("/settle", "hang")
        const settlesBefore = emulator.requests().filter((r) => r.path === "/settle").length
        void paidPost(`${child.url}/v1/call`, body, payment).catch(() => undefined)
        // The outcome is recorded and the settlement sent (and held by the emulator).
        await eventually(
          async () =>
            (await statusOf(wallet.address)) === "due" &&
            emulator.requests().filter((r) => r.path === "/settle").length === settlesBefore + 1,
          { what: "the outcome recorded and its settlement sent" }
        )
      }
      const providerCalls = fake.seen.length
      await killChildService(child)
      expect(emulator.settlements()).toHaveLength(0)

      child = await startChildService(env)
      await eventually(
        async () => (await statusOf(lasting.address)) === "settled" && (await statusOf(short.address)) === "abandoned",
        { timeoutMs: 30_000, what: "the sweeper to settle one and abandon the other" }
      )
      // Settled once, for the price; the short one moved nothing; no provider was called again.
      const settled = emulator.settlements()
      expect(settled).toHaveLength(1)
      expect(settled[0]).toMatchObject({ to: expect.stringMatching(/c0ffe$/i), amount: 10_000n })
      expect(settled[0]!.from.toLowerCase()).toBe(lasting.address.toLowerCase())
      expect(emulator.balanceOf(short.address)).toBe(100_000_000n)
      expect(fake.seen.length).toBe(providerCalls)

      // The payer asking again with its payment-identifier gets the first answer and the settlement.
      const again = await paidPost(`${child.url}/v1/call`, body, lastingPayment)
      expect(again.status).toBe(200)
      expect(again.json).toMatchObject({ status: "succeeded", data: { ok: true, answer: 42 } })
      expect(decodePaymentResponseHeader(again.headers.get("payment-response")!)).toMatchObject({
        success: true,
        transaction: settled[0]!.transaction
      })
      expect(fake.seen.length).toBe(providerCalls)
      const [abandoned] = await db.query(`SELECT failure FROM x402_payments WHERE payer = $1`, [
        short.address.toLowerCase()
      ])
      expect(abandoned.failure).toContain("expired")
    } finally {
      await killChildService(child)
    }
  }, 90_000)
})
