import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type SeededOrg, seedOrg } from "../support/fixtures.js"
import { call, eventually, startWorld, type World } from "../support/world.js"

/**
 * Without Stripe keys in development, plans follow the same journey as with Stripe: the
 * sandbox's checkout page starts a subscription, the sandbox renews it by its own clock
 * (the service's) with an invoice, a renewal its card refuses returns the org to Pay as you
 * go with a mail, a change to Max is prorated, and the sandbox's portal page cancels it.
 */
let dev: World

beforeAll(async () => {
  dev = await startWorld("billing_sandbox_plans", { smtp: true, env: { BILLING_WORKER_INTERVAL_MS: "200" } })
})

afterAll(async () => {
  await dev?.close()
})

const choose = (org: SeededOrg, body: unknown) =>
  call(dev, "POST", `/v1/orgs/${org.orgId}/billing/plan`, { token: org.owner.sessionToken, body })

const planOf = async (orgId: string) => (await dev.db.query(`SELECT plan FROM orgs WHERE id = $1`, [orgId]))[0]!.plan

const post = async (pageUrl: string, form: Record<string, string>) => {
  const response = await fetch(pageUrl, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form).toString(),
    redirect: "manual"
  })
  return { status: response.status, location: response.headers.get("location"), text: await response.text() }
}

const planPayments = (orgId: string) =>
  dev.db.query(
    `SELECT status, amount_minor::text AS amount FROM payments WHERE org_id = $1 AND purpose = 'plan' ORDER BY created_at`,
    [orgId]
  )

/** Subscribes on the sandbox's page with a test card and comes back to billing. */
const subscribe = async (org: SeededOrg, plan: "pro" | "max", card = "4242 4242 4242 4242") => {
  const started = await choose(org, { plan })
  expect(started.status, JSON.stringify(started.json)).toBe(200)
  expect(started.json.checkout_url).toMatch(
    new RegExp(`^${dev.server.baseUrl}/v1/billing/sandbox/checkout/cs_sandbox_`)
  )
  const page = await (await fetch(started.json.checkout_url)).text()
  expect(page).toContain("Sandbox checkout: development only, no money moves.")
  expect(page).toContain(`Subscribe: ${plan === "pro" ? "99.00" : "499.00"} USD a month`)
  const paid = await post(started.json.checkout_url, { card_number: card })
  expect(paid.status, paid.text).toBe(303)
  expect(paid.location).toContain(`/orgs/${org.orgId}/billing?payment=${started.json.payment.id}`)
  const back = await call(dev, "POST", `/v1/orgs/${org.orgId}/billing/payments/${started.json.payment.id}/confirm`, {
    token: org.owner.sessionToken
  })
  expect(back.json.payment.status).toBe("succeeded")
  return started.json
}

describe("plans in the sandbox", () => {
  it("subscribes on the sandbox's page and renews by the sandbox's own invoice when the month ends", async () => {
    const org = await seedOrg(dev.db)
    await subscribe(org, "pro")
    expect(await planOf(org.orgId)).toBe("pro")
    const [sub] = await dev.db.query(`SELECT id, current_period_end FROM sandbox_subscriptions WHERE org_id = $1`, [
      org.orgId
    ])
    const ended = new Date(Date.now() - 1_000)
    await dev.db.query(`UPDATE sandbox_subscriptions SET current_period_end = $2 WHERE id = $1`, [sub.id, ended])
    await eventually(async () => (await planPayments(org.orgId)).length === 2, { what: "the renewal" })
    expect(await planPayments(org.orgId)).toEqual([
      { status: "succeeded", amount: "9900" },
      { status: "succeeded", amount: "9900" }
    ])
    const [profile] = await dev.db.query(`SELECT plan_period_end FROM billing_profiles WHERE org_id = $1`, [org.orgId])
    expect(profile.plan_period_end.getTime()).toBeGreaterThan(ended.getTime() + 27 * 86_400_000)
    expect(await planOf(org.orgId)).toBe("pro")
  })

  it("returns to Pay as you go with a mail when the renewal cannot be charged", async () => {
    const org = await seedOrg(dev.db)
    // Authenticated at checkout, refused off-session: the renewal fails.
    await subscribe(org, "max", "4000 0027 6000 3184")
    expect(await planOf(org.orgId)).toBe("max")
    await dev.db.query(
      `UPDATE sandbox_subscriptions SET current_period_end = now() - interval '1 second' WHERE org_id = $1`,
      [
        org.orgId
      ]
    )
    await eventually(async () => (await planOf(org.orgId)) === "payg", { what: "the plan to end" })
    expect(await planPayments(org.orgId)).toEqual([
      { status: "succeeded", amount: "49900" },
      { status: "failed", amount: "49900" }
    ])
    const mail = await dev.smtp.waitFor(org.owner.email, (m) => m.subject.includes("plan ended"))
    expect(mail.text).toContain("could not be charged")
  })

  it("moves Pro to Max prorated, and the sandbox's portal page cancels the subscription", async () => {
    const org = await seedOrg(dev.db)
    await subscribe(org, "pro")
    const up = await choose(org, { plan: "max" })
    expect(up.json).toMatchObject({ plan: "max", payment: null })
    expect(await planOf(org.orgId)).toBe("max")
    const payments = await planPayments(org.orgId)
    expect(payments).toHaveLength(2)
    expect(BigInt(payments[1].amount)).toBeGreaterThan(39_900n)
    expect(BigInt(payments[1].amount)).toBeLessThanOrEqual(40_000n)

    const opened = await call(dev, "POST", `/v1/orgs/${org.orgId}/billing/portal`, { token: org.owner.sessionToken })
    expect(opened.status).toBe(201)
    expect(opened.json.portal_url).toMatch(new RegExp(`^${dev.server.baseUrl}/v1/billing/sandbox/portal/bps_sandbox_`))
    const page = await fetch(opened.json.portal_url)
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'")
    expect(await page.text()).toContain("Sandbox billing portal: development only, no money moves.")
    const card = await post(opened.json.portal_url, { action: "card", card_number: "5555 5555 5555 4444" })
    expect(card.text).toContain("The card ending 4444 is now the card on file.")
    const summary = await call(dev, "GET", `/v1/orgs/${org.orgId}/billing`, { token: org.owner.sessionToken })
    expect(summary.json.card).toMatchObject({ last4: "4444" })
    const cancelled = await post(opened.json.portal_url, { action: "cancel" })
    expect(cancelled.text).toContain("The subscription is cancelled.")
    expect(await planOf(org.orgId)).toBe("payg")
  })
})
