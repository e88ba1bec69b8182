import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { seedOrg } from "../support/fixtures.js"
import { bearer } from "../support/fixtures.js"
import { expectLedgerInvariant } from "../support/ledgerChecks.js"
import { request } from "../support/server.js"
import { startWorld, type World } from "../support/world.js"

/**
 * Without Stripe keys: in development the built-in payment sandbox answers behind the same
 * endpoints (labelled as a sandbox in every answer, test cards, no money); in production
 * every billing endpoint answers 503 not_configured.
 */
let dev: World
let prod: World

beforeAll(async () => {
  dev = await startWorld("billing_sandbox")
  prod = await startWorld("billing_unconfigured", {
    // Production does not start without a mail server.
    smtp: true,
    env: {
      SERVICE_ENV: "production",
      SECRETS_ENCRYPTION_KEY: "a production key for the tests only, long enough"
    }
  })
})

afterAll(async () => {
  await dev?.close()
  await prod?.close()
})

const sandboxLabel = {
  name: "sandbox",
  sandbox: true,
  publishable_key: null,
  notice: expect.stringContaining("Payment sandbox: no money moves")
}

describe("the development sandbox", () => {
  it("tops up with a test card, labelled as a sandbox in every answer", async () => {
    const org = await seedOrg(dev.db)
    const api = (path: string, init: { method?: string; body?: unknown } = {}) =>
      request(`${dev.server.url}${path}`, {
        method: init.method ?? "GET",
        headers: bearer(org.owner.sessionToken),
        body: init.body
      })
    const started = await api(`/v1/orgs/${org.orgId}/billing/top-ups`, {
      method: "POST",
      body: { amount_usd: "20", save_card: true }
    })
    expect(started.status).toBe(201)
    expect(started.json).toMatchObject({ provider: sandboxLabel, payment: { provider: "sandbox", status: "pending" } })
    expect(started.json.next_step).toContain("/v1/billing/sandbox/confirm")

    const declined = await request(`${dev.server.url}/v1/billing/sandbox/confirm`, {
      method: "POST",
      body: { client_secret: started.json.client_secret, card_number: "4000 0000 0000 0002" }
    })
    expect(declined.json.payment).toMatchObject({ status: "failed", failure_message: "Your card was declined." })
    const paid = await request(`${dev.server.url}/v1/billing/sandbox/confirm`, {
      method: "POST",
      body: { client_secret: started.json.client_secret, card_number: "4242 4242 4242 4242" }
    })
    expect(paid.status).toBe(200)
    expect(paid.json).toMatchObject({
      provider: sandboxLabel,
      payment: { status: "succeeded", card: { last4: "4242" } }
    })
    const wrong = await request(`${dev.server.url}/v1/billing/sandbox/confirm`, {
      method: "POST",
      body: { client_secret: "pi_sandbox_x_secret_y", card_number: "4242424242424242" }
    })
    expect(wrong.status).toBe(404)

    const summary = await api(`/v1/orgs/${org.orgId}/billing`)
    expect(summary.json).toMatchObject({
      provider: sandboxLabel,
      balance: { credits: "20000" },
      card: { last4: "4242" }
    })
    for (const path of ["/billing/payments", "/billing/auto-reload"]) {
      expect((await api(`/v1/orgs/${org.orgId}${path}`)).json.provider).toMatchObject({ sandbox: true })
    }
    // Auto-reload charges the sandbox card off-session.
    const reload = await api(`/v1/orgs/${org.orgId}/billing/auto-reload`, {
      method: "PUT",
      body: { enabled: true, threshold_credits: 50_000, amount_credits: 10_000 }
    })
    expect(reload.status).toBe(200)
    const deadline = Date.now() + 30_000
    while (Date.now() < deadline) {
      const [row] = await dev.db.query(
        `SELECT count(*)::int AS n FROM payments WHERE org_id = $1 AND purpose = 'auto_reload' AND status = 'succeeded'`,
        [org.orgId]
      )
      if (row.n >= 1) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const [reloaded] = await dev.db.query(`SELECT balance::text FROM org_balances WHERE org_id = $1`, [org.orgId])
    expect(BigInt(reloaded.balance)).toBeGreaterThanOrEqual(30_000n)
    await api(`/v1/orgs/${org.orgId}/billing/auto-reload`, { method: "PUT", body: { enabled: false } })
    await expectLedgerInvariant(dev.db)
  })
  it("keeps a payment's latest failure reason: a decline, then insufficient funds on the same client secret", async () => {
    const org = await seedOrg(dev.db)
    const started = await request(`${dev.server.url}/v1/orgs/${org.orgId}/billing/top-ups`, {
      method: "POST",
      headers: bearer(org.owner.sessionToken),
      body: { amount_usd: "20" }
    })
    expect(started.status).toBe(201)
    const confirm = (cardNumber: string) =>
      request(`${dev.server.url}/v1/billing/sandbox/confirm`, {
        method: "POST",
        body: { client_secret: started.json.client_secret, card_number: cardNumber }
      })
    expect((await confirm("4000 0000 0000 0002")).json.payment).toMatchObject({
      status: "failed",
      failure_message: "Your card was declined."
    })
    expect((await confirm("4000 0000 0000 9995")).json.payment).toMatchObject({
      status: "failed",
      failure_message: "Your card has insufficient funds."
    })
    const history = await request(`${dev.server.url}/v1/orgs/${org.orgId}/billing/payments`, {
      headers: bearer(org.owner.sessionToken)
    })
    expect(history.json.payments).toEqual([
      expect.objectContaining({ id: started.json.payment.id, failure_message: "Your card has insufficient funds." })
    ])
  })
})

describe("production without keys", () => {
  it("answers 503 not_configured on every billing endpoint", async () => {
    const org = await seedOrg(prod.db)
    const unconfigured =
      "Billing is not configured: set STRIPE_SECRET_KEY, STRIPE_PUBLISHABLE_KEY and STRIPE_WEBHOOK_SECRET"
    const calls: Array<[string, string, unknown, string]> = [
      ["GET", `/v1/orgs/${org.orgId}/billing`, undefined, unconfigured],
      ["GET", `/v1/orgs/${org.orgId}/billing/payments`, undefined, unconfigured],
      ["POST", `/v1/orgs/${org.orgId}/billing/top-ups`, { credits: 5000 }, unconfigured],
      ["POST", `/v1/orgs/${org.orgId}/billing/checkout`, { credits: 5000 }, unconfigured],
      ["PUT", `/v1/orgs/${org.orgId}/billing/auto-reload`, { enabled: false }, unconfigured],
      ["POST", `/v1/orgs/${org.orgId}/billing/plan`, { plan: "pro" }, unconfigured],
      [
        "POST",
        "/v1/billing/webhook",
        {},
        "Payment webhooks need Stripe (STRIPE_SECRET_KEY, STRIPE_PUBLISHABLE_KEY, STRIPE_WEBHOOK_SECRET)"
      ],
      [
        "POST",
        "/v1/billing/sandbox/confirm",
        { client_secret: "x", card_number: "4242424242424242" },
        "The payment sandbox runs only in development without Stripe keys"
      ]
    ]
    for (const [method, path, body, message] of calls) {
      const answer = await request(`${prod.server.url}${path}`, {
        method,
        headers: bearer(org.owner.sessionToken),
        body
      })
      expect(answer.status, `${method} ${path}`).toBe(503)
      expect(answer.json).toEqual({
        error: {
          code: "not_configured",
          message,
          doc_url: `${prod.server.baseUrl}/docs/errors#not_configured`,
          retryable: false
        }
      })
    }
  })
})
