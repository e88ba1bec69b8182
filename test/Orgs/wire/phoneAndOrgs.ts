import { describe, expect, it } from "vitest"
import { expectError, freshPhone, owner, signIn, verifyPhone } from "../../support/people.js"
import { call } from "../../support/world.js"
import { world } from "./world.js"

export const phoneAndOrgsCases = () => {
  describe("phone verification", () => {
    it("texts a 6-digit code through the Twilio API, valid 10 minutes, then marks the phone verified", async () => {
      const person = await signIn(world)
      const phone = freshPhone()
      const start = await call(world, "POST", "/v1/me/phone", { token: person.token, body: { phone } })
      expect(start.status).toBe(202)
      expect(start.json.status).toBe("sent")
      const [row] = await world.db.query("SELECT created_at, expires_at FROM phone_codes WHERE user_id = $1", [
        person.userId
      ])
      expect(new Date(row.expires_at).getTime() - new Date(row.created_at).getTime()).toBe(10 * 60_000)
      expect(start.json.expires_at).toBe(new Date(row.expires_at).toISOString())
      const sms = world.twilio.messages.filter((m) => m.to === phone)
      expect(sms).toHaveLength(1)
      expect(sms[0]!.from).toBe(world.twilio.from)
      expect(sms[0]!.body).toMatch(/\b\d{6}\b/)

      const verified = await call(world, "POST", "/v1/me/phone/verify", {
        token: person.token,
        body: { code: world.twilio.lastCode(phone) }
      })
      expect(verified.status).toBe(200)
      expect(verified.json).toEqual({
        user: { id: person.userId, email: person.email, name: null, email_verified: true, phone, phone_verified: true }
      })
      const me = await call(world, "GET", "/v1/me", { token: person.token })
      expect(me.json.user.phone_verified).toBe(true)
    })

    it("refuses a number that is not E.164 with 400 invalid_input", async () => {
      const person = await signIn(world)
      for (const phone of ["5551234567", "+0123456789", "+1 555 123", "phone"]) {
        expectError(
          await call(world, "POST", "/v1/me/phone", { token: person.token, body: { phone } }),
          400,
          "invalid_input"
        )
      }
    })

    it("a wrong code answers 400 invalid_code; five wrong tries spend the code", async () => {
      const person = await signIn(world)
      const phone = freshPhone()
      await call(world, "POST", "/v1/me/phone", { token: person.token, body: { phone } })
      const right = world.twilio.lastCode(phone)
      const wrong = right === "000000" ? "111111" : "000000"
      for (let i = 0; i < 5; i++) {
        expectError(
          await call(world, "POST", "/v1/me/phone/verify", { token: person.token, body: { code: wrong } }),
          400,
          "invalid_code"
        )
      }
      expectError(
        await call(world, "POST", "/v1/me/phone/verify", { token: person.token, body: { code: right } }),
        400,
        "invalid_code"
      )
      // A new code works.
      await verifyPhone(world, person.token, phone)
    })

    it("an expired code (10 minutes) answers 400 invalid_code, and so does verifying without asking", async () => {
      const person = await signIn(world)
      expectError(
        await call(world, "POST", "/v1/me/phone/verify", { token: person.token, body: { code: "123456" } }),
        400,
        "invalid_code"
      )
      const phone = freshPhone()
      await call(world, "POST", "/v1/me/phone", { token: person.token, body: { phone } })
      await world.db.query(
        "UPDATE phone_codes SET expires_at = expires_at - interval '10 minutes' WHERE user_id = $1",
        [
          person.userId
        ]
      )
      expectError(
        await call(world, "POST", "/v1/me/phone/verify", {
          token: person.token,
          body: { code: world.twilio.lastCode(phone) }
        }),
        400,
        "invalid_code"
      )
    })

    it("a phone verified on another account answers 409 phone_in_use (on asking, and on verifying)", async () => {
      const first = await signIn(world)
      const second = await signIn(world)
      const phone = freshPhone()
      // Both ask for a code before either verifies.
      await call(world, "POST", "/v1/me/phone", { token: second.token, body: { phone } })
      const secondCode = world.twilio.lastCode(phone)
      await verifyPhone(world, first.token, phone)
      expectError(
        await call(world, "POST", "/v1/me/phone/verify", { token: second.token, body: { code: secondCode } }),
        409,
        "phone_in_use"
      )
      expectError(
        await call(world, "POST", "/v1/me/phone", { token: second.token, body: { phone } }),
        409,
        "phone_in_use"
      )
    })

    it("retries a provider hiccup (5xx) and still answers 202", async () => {
      const person = await signIn(world)
      const phone = freshPhone()
      world.twilio.failNext(503, 1)
      expect((await call(world, "POST", "/v1/me/phone", { token: person.token, body: { phone } })).status).toBe(202)
      expect(world.twilio.messages.filter((m) => m.to === phone)).toHaveLength(1)
    })

    it("sends at most 5 codes an hour per account", async () => {
      const person = await signIn(world)
      for (let i = 0; i < 5; i++) {
        expect(
          (await call(world, "POST", "/v1/me/phone", { token: person.token, body: { phone: freshPhone() } })).status
        )
          .toBe(202)
      }
      const refused = await call(world, "POST", "/v1/me/phone", { token: person.token, body: { phone: freshPhone() } })
      expectError(refused, 429, "rate_limited")
      expect(refused.headers.get("ratelimit-policy")).toBe("5;w=3600")
    })
  })

  describe("creating an org", () => {
    it("needs a verified phone: 403 phone_unverified", async () => {
      const person = await signIn(world)
      expectError(
        await call(world, "POST", "/v1/orgs", { token: person.token, body: { name: "Acme" } }),
        403,
        "phone_unverified"
      )
    })

    it("makes the caller its owner and answers 201 {org: {id, name, plan, role, created_at}}", async () => {
      const person = await signIn(world)
      await verifyPhone(world, person.token)
      const res = await call(world, "POST", "/v1/orgs", { token: person.token, body: { name: "  Acme Research  " } })
      expect(res.status).toBe(201)
      expect(Object.keys(res.json.org).sort()).toEqual(["created_at", "id", "name", "plan", "role"])
      expect(res.json.org).toMatchObject({ name: "Acme Research", plan: "payg", role: "owner" })
      expect(res.json.org.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      const me = await call(world, "GET", "/v1/me", { token: person.token })
      expect(me.json.orgs).toEqual([{ id: res.json.org.id, name: "Acme Research", role: "owner" }])
      const org = await call(world, "GET", `/v1/orgs/${res.json.org.id}`, { token: person.token })
      expect(org.json).toEqual({ org: res.json.org })
      // The trial credits were granted with the org, through the ledger.
      const [balance] = await world.db.query("SELECT balance FROM org_balances WHERE org_id = $1", [res.json.org.id])
      expect(balance.balance).toBe("5000")
      const entries = await world.db.query("SELECT kind, amount FROM ledger_entries WHERE org_id = $1", [
        res.json.org.id
      ])
      expect(entries).toEqual([{ kind: "trial_grant", amount: "5000" }])
      const [grant] = await world.db.query(
        "SELECT credits, expires_at - granted_at AS term FROM trial_grants WHERE org_id = $1",
        [res.json.org.id]
      )
      expect(grant.credits).toBe("5000")
      expect(grant.term.days).toBe(30)
    })

    it("refuses an empty name with 400 invalid_input", async () => {
      const person = await owner(world)
      expectError(
        await call(world, "POST", "/v1/orgs", { token: person.token, body: { name: "  " } }),
        400,
        "invalid_input"
      )
    })
  })
}
