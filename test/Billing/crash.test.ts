import { startStripeEmulator, type StripeEmulator } from "@agent-gateway/stripe-emulator"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ChildService, killChildService, startChildService } from "../support/childService.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { type FakeEcb, startFakeEcb } from "../support/fakeEcb.js"
import { bearer, seedOrg } from "../support/fixtures.js"
import { balanceOf, expectLedgerInvariant } from "../support/ledgerChecks.js"
import { request } from "../support/server.js"
import { startSmtp, type TestSmtp } from "../support/smtp.js"
import { stripeEnv } from "../support/world.js"
import { topUpEntries } from "./support.js"

/**
 * A crash between the provider's success and the ledger entry: the service (a child
 * process) asks the provider how a paid payment ended and is killed with SIGKILL before it
 * writes anything; after a restart, the webhook's redelivery credits the payment, once.
 */
let db: TestDatabase
let stripe: StripeEmulator
let ecb: FakeEcb
let smtp: TestSmtp
let child: ChildService | undefined

beforeAll(async () => {
  db = await createTestDatabase("billing_crash")
  stripe = await startStripeEmulator()
  ecb = await startFakeEcb()
  smtp = await startSmtp()
})

afterAll(async () => {
  if (child !== undefined) await killChildService(child)
  await Promise.all([stripe?.close(), ecb?.close(), smtp?.close()])
  await db?.drop()
})

describe("a crash after the provider's success", () => {
  it("is healed by the webhook's redelivery, which credits the payment once", async () => {
    const env = { DATABASE_URL: db.url, SMTP_URL: smtp.url, ...stripeEnv(stripe, ecb) }
    child = await startChildService(env)
    const org = await seedOrg(db)
    const started = await request(`${child.url}/v1/orgs/${org.orgId}/billing/top-ups`, {
      method: "POST",
      headers: bearer(org.owner.sessionToken),
      body: { credits: 30_000 }
    })
    expect(started.status).toBe(201)
    const { client_secret, payment } = started.json
    await stripe.browserConfirm(payment.provider_payment_id, client_secret, "pm_card_visa")
    const before = await balanceOf(db, org.orgId)

    // The client comes back; the provider answers "succeeded", and the service dies right then.
    const held = stripe.hold(`GET /v1/payment_intents/${payment.provider_payment_id}`)
    const confirming = request(`${child.url}/v1/orgs/${org.orgId}/billing/payments/${payment.id}/confirm`, {
      method: "POST",
      headers: bearer(org.owner.sessionToken)
    }).catch(() => undefined)
    await held.reached
    await killChildService(child)
    held.release()
    await confirming
    expect(await balanceOf(db, org.orgId)).toBe(before)
    expect(await topUpEntries(db, org.orgId)).toHaveLength(0)

    // The first delivery found nothing listening; the provider delivers again after the restart.
    child = await startChildService(env)
    const event = stripe.lastEvent("payment_intent.succeeded", payment.provider_payment_id)
    const url = `${child.url}/v1/billing/webhook`
    expect((await stripe.deliver(url, event)).body).toEqual({ received: true, handled: true, duplicate: false })
    expect((await stripe.deliver(url, event)).body).toEqual({ received: true, handled: true, duplicate: true })
    const confirmed = await request(`${child.url}/v1/orgs/${org.orgId}/billing/payments/${payment.id}/confirm`, {
      method: "POST",
      headers: bearer(org.owner.sessionToken)
    })
    expect(confirmed.json.payment.status).toBe("succeeded")
    expect(await balanceOf(db, org.orgId)).toBe(before + 30_000n)
    expect(await topUpEntries(db, org.orgId)).toHaveLength(1)
    await expectLedgerInvariant(db)
  })

  it("resumes an auto-reload charge cut off by a crash under the same idempotency key: one charge", async () => {
    const env = { DATABASE_URL: db.url, SMTP_URL: smtp.url, ...stripeEnv(stripe, ecb) }
    if (child !== undefined) await killChildService(child)
    child = await startChildService(env)
    const org = await seedOrg(db)
    const api = (path: string, method: string, body?: unknown) =>
      request(`${child!.url}/v1/orgs/${org.orgId}${path}`, { method, headers: bearer(org.owner.sessionToken), body })
    const started = await api("/billing/top-ups", "POST", { credits: 10_000, save_card: true })
    await stripe.browserConfirm(started.json.payment.provider_payment_id, started.json.client_secret, "pm_card_visa")
    expect((await api(`/billing/payments/${started.json.payment.id}/confirm`, "POST")).json.payment.status).toBe(
      "succeeded"
    )

    // The worker starts the charge; the provider takes it, and the service dies before hearing back.
    const held = stripe.hold("POST /v1/payment_intents")
    expect(
      (await api("/billing/auto-reload", "PUT", { enabled: true, threshold_credits: 20_000, amount_credits: 15_000 }))
        .status
    ).toBe(200)
    await held.reached
    await killChildService(child)
    held.release()
    const charges = () => [...stripe.paymentIntents.values()].filter((p) => p.amount === 1_500)
    const deadline = Date.now() + 10_000
    while (charges().length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(charges()).toHaveLength(1)
    const [left] = await db.query(`SELECT status FROM payments WHERE org_id = $1 AND purpose = 'auto_reload'`, [
      org.orgId
    ])
    expect(left.status).toBe("creating")

    child = await startChildService(env)
    const until = Date.now() + 30_000
    while (Date.now() < until) {
      const [row] = await db.query(`SELECT status FROM payments WHERE org_id = $1 AND purpose = 'auto_reload'`, [
        org.orgId
      ])
      if (row.status === "succeeded") break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const reloads = await db.query(
      `SELECT status, provider_payment_id FROM payments WHERE org_id = $1 AND purpose = 'auto_reload'`,
      [org.orgId]
    )
    expect(reloads).toEqual([{ status: "succeeded", provider_payment_id: charges()[0]!.id }])
    expect(charges()).toHaveLength(1)
    expect(await balanceOf(db, org.orgId)).toBe(25_000n)
    await api("/billing/auto-reload", "PUT", { enabled: false })
    await expectLedgerInvariant(db)
  })
})
