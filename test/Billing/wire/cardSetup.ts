import { beforeAll, describe, expect, it } from "vitest"
import { addMember, seedUser } from "../../support/fixtures.js"
import { call, type World } from "../../support/world.js"
import { newOrg, reloadsOnce, webhookUrl } from "../support.js"

/**
 * Adding or replacing the saved card on the hosted page (Checkout in `mode: setup`, nothing
 * charged), with Stripe (the sandbox's is sandbox.test.ts's): the card is kept from the return or from
 * `checkout.session.completed`, and auto-reload then charges it off-session.
 */
export const cardSetupCases = (started: () => World) => {
  let stripe: World
  beforeAll(() => {
    stripe = started()
  })

  const post = (world: World, token: string, path: string, body?: unknown) =>
    call(world, "POST", path, { token, ...(body === undefined ? {} : { body }) })

  /** Submits the hosted page's form (the emulator's, with keys or in the sandbox). */
  const submit = async (pageUrl: string, cardNumber: string) => {
    const response = await fetch(pageUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ card_number: cardNumber }).toString(),
      redirect: "manual"
    })
    return { status: response.status, location: response.headers.get("location"), text: await response.text() }
  }

  describe("saving a card on Stripe's hosted page", () => {
    it("refuses a declined card, keeps a good one from the return, and auto-reload charges it off-session", async () => {
      const org = await newOrg(stripe)
      const started = await post(stripe, org.owner.sessionToken, `/v1/orgs/${org.orgId}/billing/card/setup`)
      expect(started.status).toBe(201)
      const sessionId = new URL(started.json.checkout_url).pathname.split("/").pop()!
      const session = stripe.stripe.checkoutSessions.get(sessionId)!
      expect(session).toMatchObject({
        mode: "setup",
        currency: "usd",
        customer: expect.stringMatching(/^cus_/),
        metadata: { org_id: org.orgId },
        success_url: `${stripe.server.baseUrl}/dashboard/orgs/${org.orgId}/billing?card_setup={CHECKOUT_SESSION_ID}`
      })
      const declined = await submit(started.json.checkout_url, "4000000000000002")
      expect(declined.text).toContain("Your card was declined.")
      const early = await post(stripe, org.owner.sessionToken, `/v1/orgs/${org.orgId}/billing/card/setup/confirm`)
      expect(early.json).toMatchObject({ status: "open", card: null })

      const saved = await submit(started.json.checkout_url, "5555 5555 5555 4444")
      expect(saved.location).toBe(session.success_url.replace("{CHECKOUT_SESSION_ID}", sessionId))
      const back = await post(stripe, org.owner.sessionToken, `/v1/orgs/${org.orgId}/billing/card/setup/confirm`)
      expect(back.json).toMatchObject({ status: "saved", card: { brand: "mastercard", last4: "4444" } })
      const [reload] = await reloadsOnce(stripe, org.orgId, org.owner.sessionToken)
      expect(reload).toMatchObject({ card_last4: "4444" })

      // Forgotten, the card stays forgotten even if the owner's last return is asked again.
      const removed = await call(stripe, "DELETE", `/v1/orgs/${org.orgId}/billing/card`, {
        token: org.owner.sessionToken
      })
      expect(removed.status).toBe(200)
      const again = await post(stripe, org.owner.sessionToken, `/v1/orgs/${org.orgId}/billing/card/setup/confirm`)
      expect(again.json).toMatchObject({ status: "none", card: null })
    })

    it("keeps the card from checkout.session.completed when the owner never comes back; members may not start one", async () => {
      const org = await newOrg(stripe)
      const member = await seedUser(stripe.db, { phoneVerified: true })
      await addMember(stripe.db, org.orgId, member.userId, "member")
      expect((await post(stripe, member.sessionToken, `/v1/orgs/${org.orgId}/billing/card/setup`)).status).toBe(403)

      const started = await post(stripe, org.owner.sessionToken, `/v1/orgs/${org.orgId}/billing/card/setup`)
      expect((await submit(started.json.checkout_url, "4242424242424242")).status).toBe(303)
      const sessionId = new URL(started.json.checkout_url).pathname.split("/").pop()!
      const completed = stripe.stripe.lastEvent("checkout.session.completed", sessionId)
      expect((await stripe.stripe.deliver(webhookUrl(stripe), completed)).status).toBe(200)
      const summary = await call(stripe, "GET", `/v1/orgs/${org.orgId}/billing`, { token: org.owner.sessionToken })
      expect(summary.json.card).toMatchObject({ brand: "visa", last4: "4242", exp_month: 12, exp_year: 2034 })
    })
  })
}
