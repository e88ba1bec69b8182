import { describe, expect, it } from "vitest"
import { sha256Hex } from "../../../src/Services/SecretBox/Hashes.js"
import { expectError, freshEmail, freshIp, mailedToken, signIn } from "../../support/people.js"
import { call } from "../../support/world.js"
import { world } from "./world.js"

const cookieOf = (setCookie: string | null) => {
  const value = setCookie?.match(/service_session=([^;]*)/)?.[1]
  if (!value) throw new Error(`No service_session cookie in ${setCookie}`)
  return value
}

export const emailSignInCases = () => {
  describe("email sign-in", () => {
    it("mails a one-time link over SMTP and answers 202 {status: sent}", async () => {
      const email = freshEmail()
      const before = world.smtp.messages.length
      const res = await call(world, "POST", "/auth/email/start", { body: { email }, ip: freshIp() })
      expect(res.status).toBe(202)
      expect(res.json).toEqual({ status: "sent" })
      const mail = await world.smtp.waitFor(email, (m) => world.smtp.messages.indexOf(m) >= before)
      expect(mail.from).toBe("no-reply@service.test")
      expect(mail.text).toMatch(/https:\/\/app\.example\.test\/auth\/email\/verify\?token=sil_[0-9A-Za-z]{43}/)
      expect(mail.text).toContain("15 minutes")
    })

    it("creates the account only when the link is first used, then answers new_user false", async () => {
      const email = freshEmail("New.Person").replace("new.person", "New.Person")
      const before = world.smtp.messages.length
      await call(world, "POST", "/auth/email/start", { body: { email }, ip: freshIp() })
      const token = await mailedToken(world, email.toLowerCase(), "/auth/email/verify", before)
      expect(await world.db.query("SELECT id FROM users WHERE lower(email) = lower($1)", [email])).toHaveLength(0)

      const first = await call(world, "POST", "/auth/email/verify", { body: { token } })
      expect(first.status).toBe(200)
      expect(Object.keys(first.json).sort()).toEqual(["new_user", "session_token", "user_id"])
      expect(first.json.new_user).toBe(true)
      expect(first.json.session_token).toMatch(/^ss_[0-9A-Za-z]{43}$/)

      const again = await signIn(world, email.toUpperCase())
      expect(again.userId).toBe(first.json.user_id)
      const users = await world.db.query("SELECT email, email_verified FROM users WHERE id = $1", [first.json.user_id])
      expect(users).toEqual([{ email: email.toLowerCase(), email_verified: true }])
    })

    it("GET verify sets the session cookie (HttpOnly, SameSite=Lax, 30 days, not Secure in development) and redirects to the dashboard", async () => {
      const email = freshEmail()
      const before = world.smtp.messages.length
      await call(world, "POST", "/auth/email/start", { body: { email }, ip: freshIp() })
      const token = await mailedToken(world, email, "/auth/email/verify", before)
      const res = await call(world, "GET", `/auth/email/verify?token=${encodeURIComponent(token)}`)
      expect(res.status).toBe(302)
      expect(res.headers.get("location")).toBe("https://app.example.test/dashboard")
      const setCookie = res.headers.get("set-cookie")!
      expect(setCookie).toMatch(/HttpOnly/i)
      expect(setCookie).toMatch(/SameSite=Lax/i)
      expect(setCookie).toMatch(/Max-Age=2592000/)
      expect(setCookie).toMatch(/Path=\//)
      expect(setCookie).not.toMatch(/Secure/i)
      const session = cookieOf(setCookie)
      expect(session).toMatch(/^ss_/)
      const me = await call(world, "GET", "/v1/me", { cookie: `service_session=${session}` })
      expect(me.status).toBe(200)
      expect(me.json.user.email).toBe(email)
    })

    it("answers whether a browser is signed in without a 401, and which ways of signing in exist", async () => {
      expect((await call(world, "GET", "/auth/session")).json).toEqual({ signed_in: false })
      expect((await call(world, "GET", "/auth/session", { cookie: "service_session=ss_forged" })).json)
        .toEqual({ signed_in: false })
      const person = await signIn(world)
      const signedIn = await call(world, "GET", "/auth/session", { cookie: `service_session=${person.token}` })
      expect(signedIn.status).toBe(200)
      expect(signedIn.json).toEqual({ signed_in: true })
      await call(world, "POST", "/auth/logout", { token: person.token })
      expect((await call(world, "GET", "/auth/session", { token: person.token })).json).toEqual({ signed_in: false })
      // An identity provider is configured here; without one (idp.ts's second service) it is false.
      expect((await call(world, "GET", "/auth/options")).json).toEqual({ email: true, identity_provider: true })
    })

    it("lands on the dashboard page the sign-in started from (next), never on another site", async () => {
      const email = freshEmail()
      const before = world.smtp.messages.length
      const next = "/invites/accept?token=inv_abc123"
      const start = await call(world, "POST", "/auth/email/start", { body: { email, next }, ip: freshIp() })
      expect(start.status).toBe(202)
      const mail = await world.smtp.waitFor(email, (m) => world.smtp.messages.indexOf(m) >= before)
      const link = new URL(/https:\/\/\S+/.exec(mail.text)![0])
      expect(link.searchParams.get("next")).toBe(next)
      const res = await call(world, "GET", `${link.pathname}${link.search}`)
      expect(res.status).toBe(302)
      expect(res.headers.get("location")).toBe(`https://app.example.test/dashboard${next}`)

      for (const elsewhere of ["//evil.example/x", "https://evil.example", "/\\evil.example", "dashboard"]) {
        const refused = await call(world, "POST", "/auth/email/start", {
          body: { email, next: elsewhere },
          ip: freshIp()
        })
        expect(refused.status, elsewhere).toBe(400)
        expect(refused.json.error.code).toBe("invalid_input")
      }
      // A link whose next was edited lands on the dashboard's start.
      const again = world.smtp.messages.length
      await call(world, "POST", "/auth/email/start", { body: { email }, ip: freshIp() })
      const token = await mailedToken(world, email, "/auth/email/verify", again)
      const edited = await call(
        world,
        "GET",
        `/auth/email/verify?token=${encodeURIComponent(token)}&next=${encodeURIComponent("//evil.example")}`
      )
      expect(edited.status).toBe(302)
      expect(edited.headers.get("location")).toBe("https://app.example.test/dashboard")
    })

    it("a link works once: used, unknown and missing tokens answer 401 invalid_token", async () => {
      const email = freshEmail()
      const before = world.smtp.messages.length
      await call(world, "POST", "/auth/email/start", { body: { email }, ip: freshIp() })
      const token = await mailedToken(world, email, "/auth/email/verify", before)
      expect((await call(world, "POST", "/auth/email/verify", { body: { token } })).status).toBe(200)
      expectError(await call(world, "POST", "/auth/email/verify", { body: { token } }), 401, "invalid_token")
      expectError(await call(world, "GET", `/auth/email/verify?token=${token}`), 401, "invalid_token")
      expectError(
        await call(world, "POST", "/auth/email/verify", { body: { token: "sil_nope" } }),
        401,
        "invalid_token"
      )
      expectError(await call(world, "GET", "/auth/email/verify"), 401, "invalid_token")
    })

    it("a link expires after 15 minutes", async () => {
      const email = freshEmail()
      const before = world.smtp.messages.length
      await call(world, "POST", "/auth/email/start", { body: { email }, ip: freshIp() })
      const token = await mailedToken(world, email, "/auth/email/verify", before)
      const [row] = await world.db.query("SELECT created_at, expires_at FROM sign_in_tokens WHERE token_hash = $1", [
        sha256Hex(token)
      ])
      expect(new Date(row.expires_at).getTime() - new Date(row.created_at).getTime()).toBe(15 * 60_000)
      // Fifteen minutes pass.
      await world.db.query(
        "UPDATE sign_in_tokens SET created_at = created_at - interval '15 minutes', expires_at = expires_at - interval '15 minutes' WHERE token_hash = $1",
        [sha256Hex(token)]
      )
      expectError(await call(world, "POST", "/auth/email/verify", { body: { token } }), 401, "invalid_token")
    })

    it("refuses a malformed address with 400 invalid_input", async () => {
      expectError(
        await call(world, "POST", "/auth/email/start", { body: { email: "not-an-address" }, ip: freshIp() }),
        400,
        "invalid_input"
      )
    })
  })

  describe("sessions", () => {
    it("stores only the token's SHA-256, the address and the user agent, and lasts 30 days", async () => {
      const email = freshEmail()
      const before = world.smtp.messages.length
      await call(world, "POST", "/auth/email/start", { body: { email }, ip: freshIp() })
      const link = await mailedToken(world, email, "/auth/email/verify", before)
      const ip = "203.0.113.77"
      const res = await call(world, "POST", "/auth/email/verify", {
        body: { token: link },
        ip,
        headers: { "user-agent": "SessionTest/1.0" }
      })
      const token = res.json.session_token
      const rows = await world.db.query("SELECT * FROM sessions WHERE user_id = $1", [res.json.user_id])
      expect(rows).toHaveLength(1)
      expect(rows[0].token_hash).toBe(sha256Hex(token))
      expect(JSON.stringify(rows)).not.toContain(token)
      expect(rows[0].ip).toBe(ip)
      expect(rows[0].user_agent).toBe("SessionTest/1.0")
      expect(new Date(rows[0].expires_at).getTime() - new Date(rows[0].created_at).getTime()).toBe(30 * 24 * 3600_000)
    })

    it("GET /v1/me answers exactly the specified shape", async () => {
      const person = await signIn(world)
      const me = await call(world, "GET", "/v1/me", { token: person.token })
      expect(me.status).toBe(200)
      expect(me.json).toEqual({
        user: {
          id: person.userId,
          email: person.email,
          name: null,
          email_verified: true,
          phone: null,
          phone_verified: false
        },
        orgs: []
      })
    })

    it("an ended session (30 days) answers 401 unauthenticated", async () => {
      const person = await signIn(world)
      await world.db.query("UPDATE sessions SET expires_at = now() - interval '1 second' WHERE user_id = $1", [
        person.userId
      ])
      expectError(await call(world, "GET", "/v1/me", { token: person.token }), 401, "unauthenticated")
    })

    it("an account whose email is not verified acts on nothing: 403 email_unverified, until a link proves it", async () => {
      const person = await signIn(world)
      await world.db.query("UPDATE users SET email_verified = false WHERE id = $1", [person.userId])
      expectError(await call(world, "GET", "/v1/me", { token: person.token }), 403, "email_unverified")
      const again = await signIn(world, person.email)
      expect((await call(world, "GET", "/v1/me", { token: again.token })).json.user.email_verified).toBe(true)
      expect((await call(world, "GET", "/v1/me", { token: person.token })).status).toBe(200)
    })

    it("reads the cookie only when the header carries no session token or org key", async () => {
      const person = await signIn(world)
      const cookie = `service_session=${person.token}`
      // A session token in the header wins (here an unknown one): the cookie is not read.
      expectError(await call(world, "GET", "/v1/me", { cookie, token: "ss_unknown" }), 401, "unauthenticated")
      // An org key in the header wins: an org key may not reach /v1/me.
      expectError(await call(world, "GET", "/v1/me", { cookie, token: "ok_whatever" }), 403, "forbidden")
      // A header with neither (an agent key, another scheme): the cookie counts.
      expect((await call(world, "GET", "/v1/me", { cookie, token: "sk_test_abc" })).status).toBe(200)
      expect((await call(world, "GET", "/v1/me", { cookie, headers: { authorization: "Basic Zm9vOmJhcg==" } })).status)
        .toBe(200)
    })

    it("POST /auth/logout revokes the session and clears the cookie", async () => {
      const person = await signIn(world)
      // From the service's own page, as the dashboard sends it (a cookie from elsewhere is refused).
      const res = await call(world, "POST", "/auth/logout", {
        cookie: `service_session=${person.token}`,
        headers: { origin: world.server.url }
      })
      expect(res.status).toBe(200)
      expect(res.json).toEqual({ status: "signed_out" })
      const setCookie = res.headers.get("set-cookie")!
      expect(setCookie).toMatch(/service_session=;/)
      expect(setCookie).toMatch(/Expires=Thu, 01 Jan 1970|Max-Age=0/)
      expectError(await call(world, "GET", "/v1/me", { token: person.token }), 401, "unauthenticated")
      expectError(await call(world, "POST", "/auth/logout", { token: person.token }), 401, "unauthenticated")
    })
  })

  describe("sign-in limits", () => {
    it("POST /auth/email/start: 20 an hour per address, with RateLimit headers", async () => {
      const ip = freshIp()
      let last
      for (let i = 0; i < 20; i++) {
        last = await call(world, "POST", "/auth/email/start", { body: { email: freshEmail("limit") }, ip })
        expect(last.status).toBe(202)
      }
      expect(last!.headers.get("ratelimit-limit")).toBe("20")
      expect(last!.headers.get("ratelimit-remaining")).toBe("0")
      expect(last!.headers.get("ratelimit-policy")).toBe("20;w=3600")
      const refused = await call(world, "POST", "/auth/email/start", { body: { email: freshEmail("limit") }, ip })
      expectError(refused, 429, "rate_limited")
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
      // Another address is counted apart.
      expect(
        (await call(world, "POST", "/auth/email/start", { body: { email: freshEmail("limit") }, ip: freshIp() })).status
      ).toBe(202)
    })

    it("at most 5 mails an hour go to one address, whoever asks", async () => {
      const email = freshEmail("target")
      const before = world.smtp.messages.length
      for (let i = 0; i < 5; i++) {
        expect((await call(world, "POST", "/auth/email/start", { body: { email }, ip: freshIp() })).status).toBe(202)
      }
      const refused = await call(world, "POST", "/auth/email/start", {
        body: { email: email.toUpperCase() },
        ip: freshIp()
      })
      expectError(refused, 429, "rate_limited")
      expect(refused.headers.get("ratelimit-policy")).toBe("5;w=3600")
      // Mail is handed to the SMTP server before the 202 is answered.
      expect(world.smtp.messages.slice(before).filter((m) => m.to.includes(email))).toHaveLength(5)
    })
  })
}
