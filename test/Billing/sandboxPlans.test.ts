import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type SeededOrg, seedOrg } from "../support/fixtures.js"
import { call, eventually, startWorld, type World } from "../support/world.js"
import { advanceSandboxClock, postPage, sandboxEmulatorOf } from "./support.js"

/**
 * Without Stripe keys in development, plans follow the same journey as with Stripe, on the
 * same code: the emulator's checkout page starts a subscription, the emulator renews it
 * when its clock (moved by the test) passes the month and says so by webhook, a renewal
 * its card refuses is retried and then returns the org to Pay as you go with a mail, a
 * change to Max is prorated, and the emulator's portal page replaces the card and cancels.
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

const post = postPage
const DAY = 24 * 3600

const planPayments = (orgId: string) =>
  dev.db.query(
    `SELECT status, amount_minor::text AS amount FROM payments WHERE org_id = $1 AND purpose = 'plan' ORDER BY created_at`,
    [orgId]
  )

/** Subscribes on the sandbox's page with a test card and comes back to billing. */
const subscribe = async (org: SeededOrg, plan: "pro" | "max", card = "4242 4242 4242 4242") => {
  const started = await choose(org, { plan })
  expect(started.status, JSON.stringify(started.json)).toBe(200)
  expect(started.json.checkout_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/c\/pay\/cs_test_/)
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
  it("subscribes on the emulator's page and renews by its invoice when its clock passes the month", async () => {
    const org = await seedOrg(dev.db)
    const started = await subscribe(org, "pro")
    expect(await planOf(org.orgId)).toBe("pro")
    const ended = new Date(Date.now() + 31 * DAY * 1000)
    expect((await advanceSandboxClock(sandboxEmulatorOf(started.checkout_url), 31 * DAY)).map((e) => e.type))
      .toContain("invoice.paid")
    await eventually(async () => (await planPayments(org.orgId)).length === 2, { what: "the renewal" })
    expect(await planPayments(org.orgId)).toEqual([
      { status: "succeeded", amount: "9900" },
      { status: "succeeded", amount: "9900" }
    ])
    await eventually(async () => {
      const [profile] = await dev.db.query(`SELECT plan_period_end FROM billing_profiles WHERE org_id = $1`, [
        org.orgId
      ])
      return profile.plan_period_end.getTime() > ended.getTime() + 27 * 86_400_000
    }, { what: "the next period's end" })
    expect(await planOf(org.orgId)).toBe("pro")
  })

  it("returns to Pay as you go with a mail when the renewal cannot be charged after the retries", async () => {
    const org = await seedOrg(dev.db)
    // Authenticated at checkout (3-D Secure), refused off-session: the renewal and its retries fail.
    const started = await subscribe(org, "max", "4000 0027 6000 3184")
    expect(await planOf(org.orgId)).toBe("max")
    const emulator = sandboxEmulatorOf(started.checkout_url)
    await advanceSandboxClock(emulator, 31 * DAY)
    for (let retry = 0; retry < 3; retry++) await advanceSandboxClock(emulator, 3 * DAY)
    await eventually(async () => (await planOf(org.orgId)) === "payg", { what: "the plan to end" })
    expect(await planPayments(org.orgId)).toEqual([
      { status: "succeeded", amount: "49900" },
      { status: "failed", amount: "49900" }
    ])
    const mail = await dev.smtp.waitFor(org.owner.email, (m) => m.subject.includes("plan ended"))
    expect(mail.text).toContain("could not be charged")
  })

  it("moves Pro to Max prorated, and the emulator's portal page replaces the card and cancels", async () => {
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
    expect(opened.json.portal_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/p\/session\/bps_/)
    const page = await fetch(opened.json.portal_url)
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'")
    expect(await page.text()).toContain("Sandbox billing portal: development only, no money moves.")
    const card = await post(opened.json.portal_url, { action: "card", card_number: "5555 5555 5555 4444" })
    expect(card.text).toContain("The card ending 4444 is now the card on file.")
    // The page shows the card on file: the new one, not the one it replaced.
    const shown = await (await fetch(opened.json.portal_url)).text()
    expect(shown).toContain("Card on file: mastercard ending 4444")
    expect(shown).not.toContain("ending 4242")
    await eventually(
      async () =>
        (await call(dev, "GET", `/v1/orgs/${org.orgId}/billing`, { token: org.owner.sessionToken })).json.card
          ?.last4 ===
          "4444",
      { what: "the card from customer.updated" }
    )
    const cancelled = await post(opened.json.portal_url, { action: "cancel" })
    expect(cancelled.text).toContain("The subscription is cancelled.")
    await eventually(async () => (await planOf(org.orgId)) === "payg", { what: "the plan to end" })
  })
})
