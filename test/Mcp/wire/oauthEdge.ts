import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { freshIp } from "../../support/people.js"
import { request } from "../../support/server.js"
import { world } from "./worlds.js"

/**
 * The authorization server's routes at the edge, as any other route there: bad input
 * (a NUL character in a body it reads itself) answers 400 `invalid_input`, an unknown path
 * or method the common JSON 404 or 405, and nothing a client sends makes it answer 500 or
 * a body that is not JSON. Registration answers browser-based clients across origins.
 */

const loopback = "http://127.0.0.1:7777/callback"
const form = "application/x-www-form-urlencoded"

const send = (method: string, path: string, init: { body?: string; headers?: Record<string, string> } = {}) =>
  request(`${world.server.url}${path}`, {
    method,
    headers: { "x-forwarded-for": freshIp(), ...init.headers },
    ...(init.body === undefined ? {} : { rawBody: init.body })
  })

const expectJsonError = (answer: Awaited<ReturnType<typeof send>>, status: number, code: string) => {
  expect(answer.status, answer.text).toBe(status)
  expect(answer.headers.get("content-type")).toMatch(/^application\/json/)
  expect(answer.json.error).toMatchObject({ code, retryable: false })
}

export const oauthEdgeCases = () => {
  describe("a NUL character sent to the authorization server", () => {
    it("answers 400 invalid_input at registration, token and revocation", async () => {
      const registration = await send("POST", "/oauth/register", {
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ redirect_uris: [loopback], client_name: "a\u0000b", token_endpoint_auth_method: "none" })
      })
      expectJsonError(registration, 400, "invalid_input")
      expect(registration.json.error.message).toContain("client_name")

      for (const path of ["/oauth/token", "/oauth/revoke"]) {
        const answer = await send("POST", path, {
          headers: { "content-type": form },
          body: "client_id=%00&grant_type=authorization_code&code=abc&token=abc"
        })
        expectJsonError(answer, 400, "invalid_input")
        expect(answer.json.error.message).toContain("client_id")
      }
    })

    it("leaves a clean body to the server, which reads it whole", async () => {
      const registration = await send("POST", "/oauth/register", {
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          redirect_uris: [loopback],
          client_name: "Clean client é",
          token_endpoint_auth_method: "none"
        })
      })
      expect(registration.status, registration.text).toBe(201)
      expect(registration.json.client_name).toBe("Clean client é")
      const token = await send("POST", "/oauth/token", {
        headers: { "content-type": form },
        body: new URLSearchParams({
          client_id: registration.json.client_id,
          grant_type: "authorization_code",
          code: "no-such-code",
          redirect_uri: loopback,
          code_verifier: "v".repeat(43)
        }).toString()
      })
      // The server read the form: it found the client and refused the code in OAuth's words.
      expect(token.status).toBe(400)
      expect(token.json).toMatchObject({ error: "invalid_grant" })
    })
  })

  describe("unknown routes and OPTIONS under /oauth", () => {
    it("answer the common JSON 404 and 405", async () => {
      for (
        const [method, path] of [["GET", "/oauth/nothing"], ["POST", "/oauth/nothing"], ["OPTIONS", "/oauth/nothing"]]
      ) {
        expectJsonError(await send(method!, path!), 404, "not_found")
      }
      const wrongMethod = await send("DELETE", "/oauth/token")
      expectJsonError(wrongMethod, 405, "method_not_allowed")
      expect(wrongMethod.headers.get("allow")).toContain("POST")
      // An OPTIONS that is no CORS preflight asks for nothing the server does.
      const plainOptions = await send("OPTIONS", "/oauth/token")
      expectJsonError(plainOptions, 405, "method_not_allowed")
      expect(plainOptions.headers.get("allow")).toBe("POST, OPTIONS")
    })

    it("answer registration's CORS preflight as the token endpoint's, and let the page read the registration", async () => {
      const preflight = (path: string) =>
        send("OPTIONS", path, {
          headers: {
            origin: "https://client.example",
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type"
          }
        })
      const token = await preflight("/oauth/token")
      const register = await preflight("/oauth/register")
      expect(token.status).toBe(204)
      expect(register.status).toBe(204)
      const cors = (answer: Awaited<ReturnType<typeof send>>) =>
        Object.fromEntries(
          [
            "access-control-allow-origin",
            "access-control-allow-methods",
            "access-control-allow-headers",
            "access-control-max-age",
            "vary"
          ].map((name) => [name, answer.headers.get(name)])
        )
      expect(cors(register)).toEqual(cors(token))
      expect(cors(register)).toMatchObject({
        "access-control-allow-origin": "https://client.example",
        "access-control-allow-methods": "POST"
      })

      const registered = await send("POST", "/oauth/register", {
        headers: { "content-type": "application/json", origin: "https://client.example" },
        body: JSON.stringify({ redirect_uris: [loopback], token_endpoint_auth_method: "none" })
      })
      expect(registered.status).toBe(201)
      expect(registered.headers.get("access-control-allow-origin")).toBe("https://client.example")
    })
  })

  describe("the OAuth routes under fuzzed requests", () => {
    const knownPaths = [
      "/oauth/token",
      "/oauth/revoke",
      "/oauth/register",
      "/oauth/jwks",
      "/oauth/.well-known/openid-configuration",
      "/oauth/.well-known/oauth-authorization-server",
      "/.well-known/oauth-authorization-server/oauth",
      "/oauth/register/some-client"
    ]
    const junk = fc.oneof(
      fc.constant(""),
      fc.constant("\u0000"),
      fc.constant("a\u0000b"),
      fc.constant("\ud800"),
      fc.constant("%zz"),
      fc.constant("x".repeat(5000)),
      fc.string({ maxLength: 30 }),
      fc.fullUnicodeString({ maxLength: 12 })
    )
    const fieldName = fc.oneof(
      fc.constantFrom(
        "client_id",
        "grant_type",
        "code",
        "code_verifier",
        "redirect_uri",
        "refresh_token",
        "token",
        "token_type_hint",
        "resource",
        "scope",
        "client_name",
        "redirect_uris"
      ),
      fc.string({ maxLength: 10 })
    )
    // A lone surrogate cannot be percent-encoded: it goes as it is, as a careless client sends it.
    const escaped = (text: string) => {
      try {
        return encodeURIComponent(text)
      } catch {
        return text
      }
    }
    const formBody = fc.array(fc.tuple(fieldName, junk), { maxLength: 6 }).map((pairs) => ({
      type: form,
      body: pairs.map(([name, value]) => `${escaped(name)}=${escaped(value)}`).join("&")
    }))
    const jsonBody = fc.dictionary(
      fieldName,
      fc.oneof(junk, fc.array(junk, { maxLength: 3 }), fc.integer(), fc.constant(null), fc.double())
    ).map((value) => ({ type: "application/json", body: JSON.stringify(value) }))
    const otherBody = fc.oneof(
      fc.record({ type: fc.constantFrom("text/plain", "application/json", form, "multipart/form-data"), body: junk }),
      fc.constant(undefined)
    )
    const requestArbitrary = fc.record({
      method: fc.constantFrom("GET", "POST", "OPTIONS", "PUT", "DELETE", "PATCH", "HEAD"),
      path: fc.oneof(
        fc.constantFrom(...knownPaths),
        fc.stringMatching(/^[a-z0-9._~-]{1,12}$/).map((segment) => `/oauth/${segment}`),
        fc.stringMatching(/^[a-z0-9._~%-]{1,12}$/).map((segment) => `/oauth/token/${segment}`)
      ),
      body: fc.oneof(formBody, jsonBody, otherBody),
      preflight: fc.boolean()
    })

    it("never answers 500, and answers JSON whenever it answers a body", async () => {
      await fc.assert(
        fc.asyncProperty(requestArbitrary, async ({ body, method, path, preflight }) => {
          const withBody = body !== undefined && method !== "GET" && method !== "HEAD"
          const headers: Record<string, string> = {
            ...(withBody ? { "content-type": body.type } : {}),
            ...(preflight ? { origin: "https://fuzz.example", "access-control-request-method": "POST" } : {})
          }
          const answer = await send(method, path, { headers, ...(withBody ? { body: body.body } : {}) })
          const what = `${method} ${path} ${withBody ? `${body.type} ${JSON.stringify(body.body)}` : ""}`
          expect(answer.status, what).toBeLessThan(500)
          if (answer.text.length > 0) {
            expect(answer.headers.get("content-type"), what).toMatch(/^application\/([a-z.-]+\+)?json/)
            expect(answer.json, `${what}: ${answer.text.slice(0, 200)}`).toBeDefined()
          }
        }),
        { numRuns: 300, seed: 44 }
      )
    })
  })
}
