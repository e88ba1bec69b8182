import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bearer, type SeededOrg, seedOrg } from "../support/fixtures.js"
import { balanceOf, expectLedgerInvariant } from "../support/ledgerChecks.js"
import { request } from "../support/server.js"
import { call, eventually, startWorld, type World } from "../support/world.js"
import { advanceSandboxClock, newOrg, postPage, reloadsOnce, sandboxEmulatorOf } from "./support.js"

/**
 * The development sandbox (billing without Stripe keys) over HTTP, one development service
 * for all of it: the service starts the Stripe emulator on loopback and speaks to it with the
 * Stripe provider, unchanged (labelled as a sandbox in every answer, test cards, no money),
 * and the emulator's events reach the service's own webhook route signed. Top-ups confirmed
 * with a test card on the sandbox's confirm route, Buy credits on the emulator's clearly
 * marked checkout page (back to the billing page), a card saved on its page, and plans
 * (renewed when the emulator's clock, moved by the test, passes the month; a refused renewal
 * retried and then back to Pay as you go with a mail; Pro to Max prorated; the emulator's
 * portal page replacing the card and cancelling). The rules of test cards on the services
 * are testCards.test.ts's; production without keys, the Http wire suite's
 * (test/Http/wire/billingUnconfigured.ts).
 *
 * The plans come last: they move the emulator's clock by months.
 */
let dev: World

beforeAll(async () => {
  dev = await startWorld("billing_sandbox", { smtp: true, env: { BILLING_WORKER_INTERVAL_MS: "200" } })
})

afterAll(async () => {
  await dev?.close()
})

const sandboxLabel = {
  name: "sandbox",
  sandbox: true,
  publishable_key: null,
  notice: expect.stringContaining("Payment sandbox: no money moves")
}

const api = (org: SeededOrg, path: string, init: { method?: string; body?: unknown } = {}) =>
  request(`${dev.server.url}/v1/orgs/${org.orgId}${path}`, {
    method: init.method ?? "GET",
    headers: bearer(org.owner.sessionToken),
    body: init.body
  })

/** The sandbox page as a browser posts it: a plain form. */
const payOnPage = (pageUrl: string, cardNumber: string) => postPage(pageUrl, { card_number: cardNumber })

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
    await eventually(async () => {
      const [row] = await dev.db.query(
        `SELECT count(*)::int AS n FROM payments WHERE org_id = $1 AND purpose = 'auto_reload' AND status = 'succeeded'`,
        [org.orgId]
      )
      return row.n >= 1
    }, { what: "the sandbox's auto-reload charge" })
    const [reloaded] = await dev.db.query(`SELECT balance::text FROM org_balances WHERE org_id = $1`, [org.orgId])
    expect(BigInt(reloaded.balance)).toBeGreaterThanOrEqual(30_000n)
    await api(`/v1/orgs/${org.orgId}/billing/auto-reload`, { method: "PUT", body: { enabled: false } })
    await expectLedgerInvariant(dev.db)
  })
})

describe("the sandbox's checkout page", () => {
  it("is the emulator's, marked as a sandbox, and pays with a test card back to the billing page", async () => {
    const org = await seedOrg(dev.db)
    const before = await balanceOf(dev.db, org.orgId)
    const started = await api(org, "/billing/checkout", { method: "POST", body: { amount_usd: "20", save_card: true } })
    expect(started.status).toBe(201)
    expect(started.json).toMatchObject({
      provider: { name: "sandbox", sandbox: true },
      payment: { provider: "sandbox", status: "pending" },
      client_secret: null,
      checkout_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/c\/pay\/cs_test_\w+$/)
    })
    const pageUrl: string = started.json.checkout_url
    const page = await fetch(pageUrl)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'")
    const html = await page.text()
    expect(html).toContain("Sandbox checkout: development only, no money moves.")
    expect(html).toContain("Pay 20.00 USD")
    expect(html).not.toContain("<script")

    const declined = await payOnPage(pageUrl, "4000 0000 0000 0002")
    expect(declined.status).toBe(200)
    expect(declined.location).toBeNull()
    expect(declined.text).toContain("Your card was declined.")
    // The emulator's payment_intent.payment_failed reaches the webhook route.
    await eventually(async () =>
      (await api(org, `/billing/payments/${started.json.payment.id}`)).json.payment.status === "failed"
    )
    expect((await api(org, `/billing/payments/${started.json.payment.id}`)).json.payment).toMatchObject({
      status: "failed",
      failure_message: "Your card was declined."
    })

    const paid = await payOnPage(pageUrl, "4242 4242 4242 4242")
    expect(paid.status).toBe(303)
    const sessionId = pageUrl.split("/").pop()
    expect(paid.location).toBe(
      `${dev.server.baseUrl}/dashboard/orgs/${org.orgId}/billing?payment=${started.json.payment.id}&session_id=${sessionId}`
    )
    const back = await api(org, `/billing/payments/${started.json.payment.id}/confirm`, { method: "POST" })
    expect(back.json.payment).toMatchObject({ status: "succeeded", card: { last4: "4242" }, failure_message: null })
    // Paying again (the back button) charges nothing more.
    expect((await payOnPage(pageUrl, "4242 4242 4242 4242")).status).toBe(303)
    expect(await balanceOf(dev.db, org.orgId)).toBe(before + 20_000n)
    const summary = await api(org, "/billing")
    expect(summary.json.card).toMatchObject({ last4: "4242" })
    await expectLedgerInvariant(dev.db)
  })
})

describe("saving a card in the sandbox", () => {
  it("on the emulator's page, keeps the card, and auto-reload charges it", async () => {
    const org = await newOrg(dev)
    const started = await call(dev, "POST", `/v1/orgs/${org.orgId}/billing/card/setup`, {
      token: org.owner.sessionToken
    })
    expect(started.status).toBe(201)
    expect(started.json.checkout_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/c\/pay\/cs_test_/)
    const page = await fetch(started.json.checkout_url).then((r) => r.text())
    expect(page).toContain("Save the card")
    expect(page).toContain("Sandbox checkout")
    expect((await payOnPage(started.json.checkout_url, "4000 0000 0000 0002")).text).toContain(
      "Your card was declined."
    )
    const saved = await payOnPage(started.json.checkout_url, "4242 4242 4242 4242")
    expect(saved.status).toBe(303)
    expect(saved.location).toContain(`/dashboard/orgs/${org.orgId}/billing?card_setup=cs_test_`)
    // The page kept the card before the owner is back; the return says so.
    const back = await call(dev, "POST", `/v1/orgs/${org.orgId}/billing/card/setup/confirm`, {
      token: org.owner.sessionToken
    })
    expect(back.json).toMatchObject({ status: "saved", card: { last4: "4242" } })
    await reloadsOnce(dev, org.orgId, org.owner.sessionToken)
  })
})

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
