import { describe, expect, it } from "vitest"
import { sha256Hex } from "../../../src/Services/SecretBox/Hashes.js"
import { expectError, signIn } from "../../support/people.js"
import { request } from "../../support/server.js"
import { call } from "../../support/world.js"
import { idp, withoutIdp as server, world } from "./world.js"

/**
 * Identity-provider sign-in end to end against a real OpenID Connect provider on loopback
 * (oauth2-mock-server): discovery, authorization code with PKCE, signed ID tokens.
 */

export const idpCases = () => {
  const cookieValue = (setCookie: string | null, name: string) => setCookie?.match(new RegExp(`${name}=([^;]*)`))?.[1]

  /** What a browser does: start, follow to the provider, follow back with the cookie. */
  const browserSignIn = async (claims: Record<string, unknown>) => {
    idp.nextUser(claims)
    const start = await call(world, "GET", "/auth/idp/start")
    expect(start.status).toBe(302)
    const providerUrl = new URL(start.headers.get("location")!)
    const flowCookie = cookieValue(start.headers.get("set-cookie"), "service_idp")!
    const atProvider = await request(providerUrl.href)
    expect(atProvider.status).toBe(302)
    const callbackUrl = new URL(atProvider.headers.get("location")!)
    return { start, providerUrl, flowCookie, callbackUrl }
  }

  const finish = (callbackUrl: URL, flowCookie: string | undefined) =>
    call(
      world,
      "GET",
      `${callbackUrl.pathname}${callbackUrl.search}`,
      flowCookie ? { cookie: `service_idp=${flowCookie}` } : {}
    )

  describe("identity-provider sign-in", () => {
    it("tells the sign-in page that the identity provider is configured", async () => {
      expect((await call(world, "GET", "/auth/options")).json).toEqual({ email: true, identity_provider: true })
    })

    it("redirects to the provider with PKCE (S256), state and nonce, in a 10-minute cookie", async () => {
      const { flowCookie, providerUrl, start } = await browserSignIn({ email: "x@example.com", email_verified: true })
      expect(providerUrl.origin).toBe(new URL(idp.issuer).origin)
      expect(providerUrl.pathname).toBe("/authorize")
      const params = providerUrl.searchParams
      expect(params.get("client_id")).toBe(idp.clientId)
      expect(params.get("response_type")).toBe("code")
      expect(params.get("code_challenge_method")).toBe("S256")
      expect(params.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(params.get("state")).toBeTruthy()
      expect(params.get("nonce")).toBeTruthy()
      expect(params.get("redirect_uri")).toBe(`${world.server.baseUrl}/auth/idp/callback`)
      expect(params.get("scope")).toContain("email")
      const setCookie = start.headers.get("set-cookie")!
      expect(setCookie).toMatch(/HttpOnly/i)
      expect(setCookie).toMatch(/SameSite=Lax/i)
      expect(setCookie).toMatch(/Max-Age=600/)
      expect(setCookie).toMatch(/Path=\/auth\/idp/)
      // The handle is kept only as a hash.
      const rows = await world.db.query("SELECT handle_hash FROM idp_sign_ins WHERE handle_hash = $1", [
        sha256Hex(flowCookie)
      ])
      expect(rows).toHaveLength(1)
      expect(JSON.stringify(await world.db.query("SELECT * FROM idp_sign_ins"))).not.toContain(flowCookie)
    })

    it("signs a new person in: session cookie set, redirected to the dashboard, name kept", async () => {
      const email = `idp-new-${Date.now()}@example.com`
      const { callbackUrl, flowCookie } = await browserSignIn({ email, email_verified: true, name: "Ada Lovelace" })
      const done = await finish(callbackUrl, flowCookie)
      expect(done.status).toBe(302)
      expect(done.headers.get("location")).toBe(`${world.server.baseUrl}/dashboard`)
      const setCookie = done.headers.get("set-cookie")!
      const session = cookieValue(setCookie, "service_session")!
      expect(session).toMatch(/^ss_/)
      expect(setCookie).toMatch(/service_idp=;/)
      const me = await call(world, "GET", "/v1/me", { cookie: `service_session=${session}` })
      expect(me.json.user).toMatchObject({ email, name: "Ada Lovelace", email_verified: true })
    })

    it("matches an existing account by email", async () => {
      const person = await signIn(world)
      const { callbackUrl, flowCookie } = await browserSignIn({
        email: person.email.toUpperCase(),
        email_verified: true
      })
      const done = await finish(callbackUrl, flowCookie)
      const session = cookieValue(done.headers.get("set-cookie"), "service_session")!
      const me = await call(world, "GET", "/v1/me", { token: session })
      expect(me.json.user.id).toBe(person.userId)
    })

    it("an email the provider has not verified answers 401 unverified_email", async () => {
      const { callbackUrl, flowCookie } = await browserSignIn({
        email: "unverified@example.com",
        email_verified: false
      })
      expectError(await finish(callbackUrl, flowCookie), 401, "unverified_email")
      const { callbackUrl: again, flowCookie: cookie2 } = await browserSignIn({ email: "missing-flag@example.com" })
      expectError(await finish(again, cookie2), 401, "unverified_email")
    })

    it("another browser (no cookie), a wrong state, a replay and a flow over 10 minutes answer 400 invalid_state", async () => {
      const first = await browserSignIn({ email: "state@example.com", email_verified: true })
      expectError(await finish(first.callbackUrl, undefined), 400, "invalid_state")
      expectError(await finish(first.callbackUrl, "idp_somebody_else"), 400, "invalid_state")

      const tampered = await browserSignIn({ email: "state@example.com", email_verified: true })
      tampered.callbackUrl.searchParams.set("state", "forged")
      expectError(await finish(tampered.callbackUrl, tampered.flowCookie), 400, "invalid_state")
      // The flow was spent by that attempt.
      tampered.callbackUrl.searchParams.set("state", tampered.providerUrl.searchParams.get("state")!)
      expectError(await finish(tampered.callbackUrl, tampered.flowCookie), 400, "invalid_state")

      const slow = await browserSignIn({ email: "state@example.com", email_verified: true })
      await world.db.query(
        "UPDATE idp_sign_ins SET expires_at = expires_at - interval '10 minutes' WHERE handle_hash = $1",
        [
          sha256Hex(slow.flowCookie)
        ]
      )
      expectError(await finish(slow.callbackUrl, slow.flowCookie), 400, "invalid_state")

      const replayed = await browserSignIn({ email: "state@example.com", email_verified: true })
      expect((await finish(replayed.callbackUrl, replayed.flowCookie)).status).toBe(302)
      expectError(await finish(replayed.callbackUrl, replayed.flowCookie), 400, "invalid_state")
    })

    it("a sign-in the provider did not complete answers 401 idp_failed (retryable)", async () => {
      idp.failNextAuthorization("access_denied")
      const denied = await browserSignIn({ email: "denied@example.com", email_verified: true })
      expect(denied.callbackUrl.searchParams.get("error")).toBe("access_denied")
      const res = await finish(denied.callbackUrl, denied.flowCookie)
      expectError(res, 401, "idp_failed")
      expect(res.json.error.retryable).toBe(true)

      const forged = await browserSignIn({ email: "forged@example.com", email_verified: true })
      forged.callbackUrl.searchParams.set("code", "not-a-code-the-provider-issued")
      expectError(await finish(forged.callbackUrl, forged.flowCookie), 401, "idp_failed")
    })
  })

  describe("identity-provider sign-in switched off", () => {
    it("answers 503 not_configured", async () => {
      expect((await request(`${server.url}/auth/options`)).json).toEqual({ email: true, identity_provider: false })
      const res = await request(`${server.url}/auth/idp/start`)
      expectError(res, 503, "not_configured")
      expectError(await request(`${server.url}/auth/idp/callback?code=x&state=y`), 503, "not_configured")
    })
  })
}
