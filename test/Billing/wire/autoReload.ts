import { beforeAll, describe, expect, it } from "vitest"
import { bearer, seedAgent, type SeededOrg } from "../../support/fixtures.js"
import { balanceOf, expectLedgerInvariant } from "../../support/ledgerChecks.js"
import { request } from "../../support/server.js"
import { workersSettled } from "../../support/workerRounds.js"
import { call, eventually, type World } from "../../support/world.js"
import { errorBody, newOrg, paidTopUp } from "../support.js"

/**
 * Auto-reload: one off-session charge on the saved card when settlements take the balance
 * under the threshold (never two at once, however many settle together), the monthly
 * limit, mails on failure and switching off after three failures in a row.
 */
export const autoReloadCases = (started: () => World) => {
  let world: World
  beforeAll(() => {
    world = started()
  })

  const setAutoReload = (org: SeededOrg, body: unknown) =>
    call(world, "PUT", `/v1/orgs/${org.orgId}/billing/auto-reload`, { token: org.owner.sessionToken, body })

  /** An org with `credits` bought by card and the card saved. */
  const fundedWithCard = async (credits: number) => {
    const org = await newOrg(world)
    const started = await paidTopUp(world, org, { credits, save_card: true })
    const done = await call(world, "POST", `/v1/orgs/${org.orgId}/billing/payments/${started.payment.id}/confirm`, {
      token: org.owner.sessionToken
    })
    expect(done.json.payment.status).toBe("succeeded")
    return org
  }

  /** Spends credits the way any charge would for the ledger: an entry and the balance together. */
  const spend = async (orgId: string, credits: bigint) => {
    await world.db.query(
      `INSERT INTO ledger_entries (id, org_id, kind, amount, credits, note, created_at)
     VALUES (gen_random_uuid(), $1, 'adjustment', $2, $3, 'test: spent', now())`,
      [orgId, (-credits).toString(), credits.toString()]
    )
    await world.db.query(`UPDATE org_balances SET balance = balance - $2 WHERE org_id = $1`, [
      orgId,
      credits.toString()
    ])
  }

  const autoReloads = (orgId: string) =>
    world.db.query<{ id: string; status: string; credits: string; failure_message: string | null }>(
      `SELECT id, status, credits::text, failure_message FROM payments WHERE org_id = $1 AND purpose = 'auto_reload' ORDER BY created_at`,
      [orgId]
    )

  describe("auto-reload settings", () => {
    it("answers 409 no_saved_card without a saved card", async () => {
      const org = await newOrg(world)
      const answer = await setAutoReload(org, { enabled: true, threshold_credits: 10_000, amount_credits: 20_000 })
      expect(answer.status).toBe(409)
      expect(answer.json).toEqual(
        errorBody(
          world,
          "no_saved_card",
          false,
          "Auto-reload needs a saved card: save one, or keep the card when buying credits in US dollars, then switch it on"
        )
      )
    })

    it("refuses amounts that are not whole cents within the top-up limits", async () => {
      const org = await fundedWithCard(10_000)
      for (const amount of [0, 1_005, "x", 6_000_000]) {
        const answer = await setAutoReload(org, { enabled: true, threshold_credits: 1_000, amount_credits: amount })
        expect(answer.status).toBe(400)
        expect(answer.json.error.code).toBe("invalid_amount")
      }
      const shown = await call(world, "GET", `/v1/orgs/${org.orgId}/billing/auto-reload`, {
        token: org.owner.sessionToken
      })
      expect(shown.json.auto_reload).toMatchObject({
        enabled: false,
        currency: "usd",
        note: expect.stringContaining("RBI")
      })
    })
  })

  describe("auto-reload charges", () => {
    it("starts exactly one charge when 200 concurrent settlements take the balance under the threshold", async () => {
      const org = await fundedWithCard(100_000)
      const enabled = await setAutoReload(org, { enabled: true, threshold_credits: 99_000, amount_credits: 20_000 })
      expect(enabled.status).toBe(200)
      expect(enabled.json.auto_reload).toMatchObject({
        enabled: true,
        threshold: { credits: "99000" },
        amount: { credits: "20000" },
        monthly_limit: null
      })
      const agent = await seedAgent(world.db, org.orgId, { mode: "live" })
      // A slow provider widens the window in which a second charge could start.
      world.stripe.delay("POST /v1/payment_intents", 300)
      const calls = await Promise.all(
        Array.from(
          { length: 200 },
          () =>
            request(`${world.server.url}/v1/call`, {
              method: "POST",
              headers: bearer(agent.key),
              body: { endpoint: "fakeprov/ok" }
            })
        )
      )
      expect(calls.every((c) => c.status === 200)).toBe(true)
      await eventually(async () => (await autoReloads(org.orgId)).some((p) => p.status === "succeeded"), {
        what: "the auto-reload charge"
      })
      // Give any second charge every chance to appear.
      await workersSettled(["auto-reload"])
      expect(await autoReloads(org.orgId)).toEqual([{
        id: expect.any(String),
        status: "succeeded",
        credits: "20000",
        failure_message: null
      }])
      // The org's own charges at Stripe (the emulator serves the whole billing suite).
      const [profile] = await world.db.query(`SELECT customer_id FROM billing_profiles WHERE org_id = $1`, [org.orgId])
      const charges = [...world.stripe.paymentIntents.values()].filter((p) =>
        p.customer === profile.customer_id && p.metadata.payment_id !== undefined && p.amount === 2_000
      )
      expect(charges).toHaveLength(1)
      expect(await balanceOf(world.db, org.orgId)).toBe(100_000n - 2_000n + 20_000n)
      const mail = await world.smtp.waitFor(
        org.owner.email,
        (m) => m.subject.includes("Receipt") && m.text.includes("Auto-reload")
      )
      expect(mail.text).toContain("20000 credits")
      await expectLedgerInvariant(world.db)
    })

    it("starts a charge at once when switched on under the threshold, and never passes the monthly limit", async () => {
      const org = await fundedWithCard(10_000)
      const answer = await setAutoReload(org, {
        enabled: true,
        threshold_credits: 50_000,
        amount_credits: 20_000,
        monthly_limit_credits: 40_000
      })
      expect(answer.status).toBe(200)
      await eventually(async () => (await balanceOf(world.db, org.orgId)) >= 50_000n, { what: "two reloads" })
      await workersSettled(["auto-reload"])
      // 10,000 + 20,000 = 30,000 is still under 50,000: one more (40,000 of the month's limit), then no more.
      expect((await autoReloads(org.orgId)).map((p) => p.status)).toEqual(["succeeded", "succeeded"])
      await spend(org.orgId, 40_000n)
      await workersSettled(["auto-reload"])
      expect(await autoReloads(org.orgId)).toHaveLength(2)
      const shown = await call(world, "GET", `/v1/orgs/${org.orgId}/billing`, { token: org.owner.sessionToken })
      expect(shown.json.auto_reload).toMatchObject({
        used_this_month: { credits: "40000" },
        monthly_limit: { credits: "40000" }
      })
      await expectLedgerInvariant(world.db)
    })

    it("never takes a new org past the $200 cap", async () => {
      const org = await fundedWithCard(190_000)
      await spend(org.orgId, 180_000n)
      const answer = await setAutoReload(org, { enabled: true, threshold_credits: 50_000, amount_credits: 20_000 })
      expect(answer.status).toBe(200)
      await workersSettled(["auto-reload"])
      expect(await autoReloads(org.orgId)).toEqual([])
      await setAutoReload(org, { enabled: true, threshold_credits: 50_000, amount_credits: 10_000 })
      await eventually(async () => (await autoReloads(org.orgId)).some((p) => p.status === "succeeded"), {
        what: "the reload that fits"
      })
      await workersSettled(["auto-reload"])
      expect((await autoReloads(org.orgId)).map((p) => p.credits)).toEqual(["10000"])
      await setAutoReload(org, { enabled: false })
      await expectLedgerInvariant(world.db)
    })

    it("mails the owners on each failure and switches off after 3 failures in a row", async () => {
      const org = await fundedWithCard(10_000)
      const [profile] = await world.db.query(`SELECT card_payment_method_id FROM billing_profiles WHERE org_id = $1`, [
        org.orgId
      ])
      world.stripe.setBehaviour(profile.card_payment_method_id, "declined")
      const answer = await setAutoReload(org, { enabled: true, threshold_credits: 50_000, amount_credits: 20_000 })
      expect(answer.status).toBe(200)
      await eventually(async () => (await autoReloads(org.orgId)).length >= 3, { what: "three failed charges" })
      await workersSettled(["auto-reload"])
      const attempts = await autoReloads(org.orgId)
      expect(attempts.map((p) => p.status)).toEqual(["failed", "failed", "failed"])
      expect(attempts[0]!.failure_message).toBe("Your card was declined.")
      const shown = await call(world, "GET", `/v1/orgs/${org.orgId}/billing/auto-reload`, {
        token: org.owner.sessionToken
      })
      expect(shown.json.auto_reload).toMatchObject({
        enabled: false,
        failures_in_a_row: 3,
        disabled_reason: expect.stringContaining("3 failed charges")
      })
      await world.smtp.waitFor(org.owner.email, (m) => m.subject.includes("Auto-reload switched off"))
      const failures = world.smtp.messages.filter((m) =>
        m.to.includes(org.owner.email.toLowerCase()) && m.subject.includes("Auto-reload charge failed")
      )
      expect(failures).toHaveLength(2)
      expect(await balanceOf(world.db, org.orgId)).toBe(10_000n)
      await expectLedgerInvariant(world.db)
    })

    it("counts a card that needs its holder's authentication as a failure", async () => {
      const org = await fundedWithCard(10_000)
      const [profile] = await world.db.query(`SELECT card_payment_method_id FROM billing_profiles WHERE org_id = $1`, [
        org.orgId
      ])
      world.stripe.setBehaviour(profile.card_payment_method_id, "authentication_required")
      await setAutoReload(org, { enabled: true, threshold_credits: 50_000, amount_credits: 20_000 })
      await eventually(async () => (await autoReloads(org.orgId)).some((p) => p.status === "failed"), {
        what: "a failed charge"
      })
      const first = (await autoReloads(org.orgId))[0]!
      expect(first).toMatchObject({
        status: "failed",
        failure_message: expect.stringContaining("requires authentication")
      })
      const mail = await world.smtp.waitFor(
        org.owner.email,
        (m) => m.subject.includes("confirm the charge with your bank")
      )
      expect(mail.text).toContain("requires authentication")
      await setAutoReload(org, { enabled: false })

      // The mail's link: the billing page names the charge, and Stripe's hosted page lets the holder confirm it.
      const link = /(https?:\/\/\S+\?authenticate=([0-9a-f-]+))/.exec(mail.text)
      // The service's public address (BASE_URL) leads it; the test server has none of its own.
      expect(link?.[1]).toMatch(new RegExp(`/dashboard/orgs/${org.orgId}/billing\\?authenticate=${first.id}$`))
      const before = await balanceOf(world.db, org.orgId)
      const started = await call(world, "POST", `/v1/orgs/${org.orgId}/billing/checkout`, {
        token: org.owner.sessionToken,
        body: { credits: first.credits, save_card: true, idempotency_key: `authenticate:${first.id}` }
      })
      expect(started.status).toBe(201)
      const paid = await world.stripe.payCheckout(started.json.checkout_url, "4000 0027 6000 3184")
      expect(paid.status, paid.text).toBe(303)
      await call(world, "POST", `/v1/orgs/${org.orgId}/billing/payments/${started.json.payment.id}/confirm`, {
        token: org.owner.sessionToken
      })
      expect(await balanceOf(world.db, org.orgId)).toBe(before + BigInt(first.credits))
    })
  })
}
