import { expect } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../support/database.js"
import { bearer, type SeededOrg, seedOrg } from "../../support/fixtures.js"
import { request, startServer, type TestServer } from "../../support/server.js"
import { startSmtp, type TestSmtp } from "../../support/smtp.js"
import { type FakeEcb, startFakeEcb } from "./ecb.js"
import {
  FAKE_PUBLISHABLE_KEY,
  FAKE_SECRET_KEY,
  FAKE_WEBHOOK_SECRET,
  type FakeStripe,
  startFakeStripe
} from "./fakeStripe.js"

/**
 * The service on its own database, configured for Stripe and pointed at a fake Stripe API,
 * a fake ECB rates file and a real SMTP server, all on loopback.
 */
export interface BillingWorld {
  readonly db: TestDatabase
  server: TestServer
  readonly stripe: FakeStripe
  readonly ecb: FakeEcb
  readonly smtp: TestSmtp
  readonly env: Record<string, string>
  readonly webhookUrl: () => string
  readonly api: (path: string, init?: { method?: string; token?: string; body?: unknown }) => ReturnType<typeof request>
  readonly newOrg: (options?: { createdDaysAgo?: number }) => Promise<SeededOrg>
  /** Starts a top-up and pays it in the "browser" with a test payment method; answers the start answer. */
  readonly paidTopUp: (org: SeededOrg, body: Record<string, unknown>, paymentMethod?: string) => Promise<any>
  readonly restart: () => Promise<void>
  readonly close: () => Promise<void>
}

export const billingEnv = (db: TestDatabase, stripe: FakeStripe, ecb: FakeEcb, smtp: TestSmtp) => ({
  DATABASE_URL: db.url,
  STRIPE_SECRET_KEY: FAKE_SECRET_KEY,
  STRIPE_PUBLISHABLE_KEY: FAKE_PUBLISHABLE_KEY,
  STRIPE_WEBHOOK_SECRET: FAKE_WEBHOOK_SECRET,
  STRIPE_API_BASE: stripe.url,
  FX_RATES_URL: ecb.url,
  SMTP_URL: smtp.url,
  PAYMENT_PROVIDER_TIMEOUT_MS: "1500",
  BILLING_WORKER_INTERVAL_MS: "100"
})

export const startBillingWorld = async (label: string, env: Record<string, string> = {}): Promise<BillingWorld> => {
  const db = await createTestDatabase(label)
  const stripe = await startFakeStripe()
  const ecb = await startFakeEcb()
  ecb.set({ date: "2026-11-20", usd: "1.0500", inr: "88.6200" })
  const smtp = await startSmtp()
  const fullEnv = { ...billingEnv(db, stripe, ecb, smtp), ...env }
  const server = await startServer(fullEnv)
  const world: BillingWorld = {
    db,
    server,
    stripe,
    ecb,
    smtp,
    env: fullEnv,
    webhookUrl: () => `${world.server.url}/v1/billing/webhook`,
    api: (path, init = {}) =>
      request(`${world.server.url}${path}`, {
        method: init.method ?? (init.body === undefined ? "GET" : "POST"),
        headers: init.token === undefined ? {} : bearer(init.token),
        body: init.body
      }),
    newOrg: async (options = {}) => {
      const org = await seedOrg(db)
      if (options.createdDaysAgo !== undefined) {
        await db.query(`UPDATE orgs SET created_at = now() - ($2 || ' days')::interval WHERE id = $1`, [
          org.orgId,
          String(options.createdDaysAgo)
        ])
      }
      return org
    },
    paidTopUp: async (org, body, paymentMethod = "pm_card_visa") => {
      const started = await world.api(`/v1/orgs/${org.orgId}/billing/top-ups`, { token: org.owner.sessionToken, body })
      expect(started.status, JSON.stringify(started.json)).toBe(201)
      await stripe.browserConfirm(started.json.payment.provider_payment_id, started.json.client_secret, paymentMethod)
        .catch(
          () => undefined
        )
      return started.json
    },
    restart: async () => {
      await world.server.close()
      world.server = await startServer(fullEnv)
    },
    close: async () => {
      await world.server.close()
      await Promise.all([stripe.close(), ecb.close(), smtp.close()])
      await db.drop()
    }
  }
  return world
}

/** The ledger invariant for every org of the database: the sum of its entries is its balance. */
export const expectLedgerInvariant = async (db: TestDatabase) => {
  const rows = await db.query<{ org_id: string; balance: string; sum: string }>(
    `SELECT b.org_id, b.balance::text,
            COALESCE((SELECT SUM(e.amount) FROM ledger_entries e WHERE e.org_id = b.org_id), 0)::text AS sum
     FROM org_balances b`
  )
  for (const row of rows) expect(row.sum, `org ${row.org_id}`).toBe(row.balance)
  return rows.length
}

export const balanceOf = async (db: TestDatabase, orgId: string) => {
  const [row] = await db.query(`SELECT balance::text FROM org_balances WHERE org_id = $1`, [orgId])
  return BigInt(row?.balance ?? "0")
}

export const topUpEntries = (db: TestDatabase, orgId: string) =>
  db.query<{ amount: string; note: string }>(
    `SELECT amount::text, note FROM ledger_entries WHERE org_id = $1 AND kind = 'top_up' ORDER BY seq`,
    [orgId]
  )

/** The exact error body the service answers for a code. */
export const errorBody = (world: BillingWorld, code: string, retryable: boolean, message?: string) => ({
  error: {
    code,
    message: message ?? expect.any(String),
    doc_url: `${world.server.baseUrl}/docs/errors#${code}`,
    retryable
  }
})

export const waitUntil = async (check: () => Promise<boolean>, what: string, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`Timed out waiting for ${what}`)
}
