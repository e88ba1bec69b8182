import { EMULATOR_SECRET_KEY } from "@agent-gateway/stripe-emulator"
import { expect } from "vitest"
import type { OrgId } from "../../src/Domain/Ids.js"
import type { TestDatabase } from "../support/database.js"
import { type SeededOrg, seedOrg } from "../support/fixtures.js"
import { call, eventually, grantTrial, type World } from "../support/world.js"

/** Billing's helpers, for a world started with `{ stripe: true }`. */

/** Where the (fake) Stripe sends its events. */
export const webhookUrl = (world: World) => `${world.server.url}/v1/billing/webhook`

/** An org with an owner, optionally made `createdDaysAgo` days ago (the new-account cap). */
export const newOrg = async (
  world: { readonly db: TestDatabase },
  options: { createdDaysAgo?: number } = {}
): Promise<SeededOrg> => {
  const org = await seedOrg(world.db)
  if (options.createdDaysAgo !== undefined) {
    await world.db.query(`UPDATE orgs SET created_at = now() - ($2 || ' days')::interval WHERE id = $1`, [
      org.orgId,
      String(options.createdDaysAgo)
    ])
  }
  return org
}

/** Starts a top-up and pays it in the "browser" with a test payment method; answers the start answer. */
export const paidTopUp = async (
  world: World,
  org: SeededOrg,
  body: Record<string, unknown>,
  paymentMethod = "pm_card_visa"
) => {
  const started = await call(world, "POST", `/v1/orgs/${org.orgId}/billing/top-ups`, {
    token: org.owner.sessionToken,
    body
  })
  expect(started.status, JSON.stringify(started.json)).toBe(201)
  await world.stripe.browserConfirm(started.json.payment.provider_payment_id, started.json.client_secret, paymentMethod)
    .catch(() => undefined)
  return started.json
}

export const topUpEntries = (db: TestDatabase, orgId: string) =>
  db.query<{ amount: string; note: string }>(
    `SELECT amount::text, note FROM ledger_entries WHERE org_id = $1 AND kind = 'top_up' ORDER BY seq`,
    [orgId]
  )

/** The exact error body the service answers for a code. */
export const errorBody = (world: World, code: string, retryable: boolean, message?: string) => ({
  error: {
    code,
    message: message ?? expect.any(String),
    doc_url: `${world.server.baseUrl}/docs/errors#${code}`,
    retryable
  }
})

/** An org's top-up of `credits`, paid and credited through the `payment_intent.succeeded` webhook. */
export const creditedTopUp = async (world: World, credits: number, org?: SeededOrg) => {
  const owner = org ?? (await newOrg(world))
  const started = await paidTopUp(world, owner, { credits })
  const event = world.stripe.lastEvent("payment_intent.succeeded", started.payment.provider_payment_id)
  expect((await world.stripe.deliver(webhookUrl(world), event)).status).toBe(200)
  return { org: owner, payment: started.payment }
}

/** The ledger entries naming a payment (its top-up, take-backs and re-credits), in order. */
export const paymentEntries = (db: TestDatabase, orgId: string, paymentId: string) =>
  db.query<{ kind: string; amount: string; note: string }>(
    `SELECT kind, amount::text, note FROM ledger_entries WHERE org_id = $1 AND note LIKE '%' || $2 || '%' ORDER BY seq`,
    [orgId, paymentId]
  )

/** Whether the org's credits are frozen. */
export const frozenOf = async (db: TestDatabase, orgId: string) => {
  const [row] = await db.query(`SELECT frozen FROM org_balances WHERE org_id = $1`, [orgId])
  return row?.frozen === true
}

/** The sandbox's Stripe emulator (started by the service in development without keys), from one of its pages' addresses. */
export const sandboxEmulatorOf = (pageUrl: string) => new URL(pageUrl).origin

/** Moves the sandbox emulator's clock, as a test would move Stripe's test clock; answers the events it made. */
export const advanceSandboxClock = async (emulatorUrl: string, seconds: number): Promise<Array<{ type: string }>> => {
  const answer = await fetch(`${emulatorUrl}/_emulator/advance_clock`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${EMULATOR_SECRET_KEY}`,
      "content-type": "application/x-www-form-urlencoded"
    },
    body: new URLSearchParams({ seconds: String(seconds) }).toString()
  })
  expect(answer.status).toBe(200)
  return ((await answer.json()) as { data: Array<{ type: string }> }).data
}

/** Posts a hosted page's form as a browser does; a card asking for 3-D Secure gets its step `authentication`. */
export const postPage = async (
  pageUrl: string,
  form: Record<string, string>,
  authentication: "complete" | "fail" = "complete"
) => {
  const post = async (body: Record<string, string>) => {
    const response = await fetch(pageUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(body).toString(),
      redirect: "manual"
    })
    return { status: response.status, location: response.headers.get("location"), text: await response.text() }
  }
  const first = await post(form)
  return first.text.includes(`name="three_d_secure"`) ? post({ ...form, three_d_secure: authentication }) : first
}

/** Switches auto-reload on far above the balance and waits for its one charge on the saved card; answers the charge's rows. */
export const reloadsOnce = async (world: World, orgId: string, token: string) => {
  // A new org's trial credits open its balance, as signing up does.
  await grantTrial(world, orgId as OrgId)
  const on = await call(world, "PUT", `/v1/orgs/${orgId}/billing/auto-reload`, {
    token,
    body: { enabled: true, threshold_credits: 1_000_000, amount_credits: 10_000, monthly_limit_credits: 10_000 }
  })
  expect(on.status, JSON.stringify(on.json)).toBe(200)
  return eventually(async () => {
    const rows = await world.db.query(
      `SELECT status, card_last4 FROM payments WHERE org_id = $1 AND purpose = 'auto_reload' AND status = 'succeeded'`,
      [orgId]
    )
    return rows.length > 0 ? rows : undefined
  }, { what: "auto-reload to charge the saved card" })
}
