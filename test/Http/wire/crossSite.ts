import { OpenApi } from "@effect/platform"
import { randomUUID } from "node:crypto"
import { beforeAll, describe, expect, it } from "vitest"
import { makeOwnOrigin, requestSite } from "../../../src/Http/Middleware/RequestSite.js"
import { DocumentedApi } from "../../../src/Http/OpenApi/Document.js"
import { makeAgent, makeOrgKey, owner, signIn } from "../../support/people.js"
import { call } from "../../support/world.js"
import { base as OWN, world } from "./world.js"

/**
 * Cross-site request forgery: every state-changing route that accepts the session cookie,
 * read from the service's OpenAPI document (so a route added later is covered), is
 * refused with 403 `forbidden` when another site's page sends it, and answered as usual
 * from the service's own pages or with a bearer credential.
 */
const EVIL = "https://evil.example"

interface Route {
  readonly method: string
  readonly path: string
}

const document = OpenApi.fromApi(DocumentedApi) as {
  paths: Record<string, Record<string, { security?: Array<object> }>>
}
const cookieWrites: Array<Route> = Object.entries(document.paths).flatMap(([path, operations]) =>
  Object.entries(operations).flatMap(([method, operation]) =>
    !["get", "head", "options"].includes(method) &&
      (operation.security ?? []).some((requirement) => "sessionCookie" in requirement)
      ? [{ method: method.toUpperCase(), path }]
      : []
  )
)
  // Signing out ends the session the others use: last.
  .sort((a, b) => Number(a.path === "/auth/logout") - Number(b.path === "/auth/logout"))

let person: { email: string; token: string; orgId: string }
let orgKey: string

export const crossSiteCases = () => {
  beforeAll(async () => {
    person = await owner(world, "Cross Site")
    orgKey = (await makeOrgKey(world, person.token, person.orgId, "write")).secret
  })

  const pathOf = (route: Route) =>
    route.path.replace(/\{(\w+)\}/g, (_match, name: string) => (name === "orgId" ? person.orgId : randomUUID()))

  const send = (route: Route, headers: Record<string, string>, credential: { cookie?: string; token?: string }) =>
    call(world, route.method, pathOf(route), { ...credential, headers, body: {} })

  const isCrossSiteRefusal = (res: { status: number; json: any }) =>
    res.status === 403 && res.json?.error?.code === "forbidden" &&
    String(res.json?.error?.message).startsWith("Cross-site request refused")

  /** Sends every route with `headers`, collecting each route whose answer `ok` rejects. */
  const walk = async (
    headers: Record<string, string>,
    credential: () => { cookie?: string; token?: string },
    ok: (res: Awaited<ReturnType<typeof call>>) => boolean
  ) => {
    const failures: Array<string> = []
    for (const route of cookieWrites) {
      const res = await send(route, headers, credential())
      if (!ok(res)) failures.push(`${route.method} ${route.path}: ${res.status} ${res.text.slice(0, 200)}`)
    }
    return failures
  }

  const cookie = () => ({ cookie: `service_session=${person.token}` })

  /** A session of its own for a walk that signs out at its end. */
  const freshSession = async () => (await signIn(world, person.email)).token

  describe("state-changing routes with the session cookie", () => {
    it("are read from the contract: the org, account and sign-in routes that take a session", () => {
      const names = cookieWrites.map((route) => `${route.method} ${route.path}`)
      expect(names).toEqual(expect.arrayContaining([
        "POST /v1/orgs/{orgId}/keys",
        "POST /v1/orgs/{orgId}/agents/{agentId}/rotate-key",
        "POST /v1/orgs",
        "POST /auth/logout",
        "POST /auth/invites/accept"
      ]))
      expect(names.length).toBeGreaterThan(20)
    })

    for (
      const [label, headers] of [
        ["a foreign Origin", { origin: EVIL }],
        ["Origin: null", { origin: "null" }],
        ["Sec-Fetch-Site: cross-site without Origin", { "sec-fetch-site": "cross-site" }],
        ["Sec-Fetch-Site: same-site (a sibling subdomain) without Origin", { "sec-fetch-site": "same-site" }],
        ["a foreign Referer alone", { referer: `${EVIL}/page` }],
        ["an Origin that only begins like the service's", { origin: `${OWN}.evil.example` }],
        ["none of Origin, Sec-Fetch-Site and Referer", {}]
      ] as const
    ) {
      it(`are refused with 403 forbidden for ${label}`, async () => {
        expect(await walk(headers, cookie, isCrossSiteRefusal)).toEqual([])
      })
    }

    it("the refusal is the common error body", async () => {
      const res = await call(world, "POST", `/v1/orgs/${person.orgId}/keys`, {
        ...cookie(),
        headers: { origin: EVIL },
        body: { name: "stolen", scope: "write" }
      })
      expect(res.status).toBe(403)
      expect(res.json.error).toEqual({
        code: "forbidden",
        message: expect.stringMatching(
          /^Cross-site request refused \(Origin https:\/\/evil.example is not this service\)/
        ),
        doc_url: `${OWN}/docs/errors#forbidden`,
        retryable: false
      })
      const keys = await call(world, "GET", `/v1/orgs/${person.orgId}/keys`, { token: person.token })
      expect(keys.json.keys.map((key: { name: string }) => key.name)).not.toContain("stolen")
    })

    for (
      const [label, headers] of [
        ["the service's own Origin", { origin: OWN }],
        ["Sec-Fetch-Site: same-origin", { "sec-fetch-site": "same-origin" }],
        ["a Referer of the service's own page", { referer: `${OWN}/dashboard/keys` }]
      ] as const
    ) {
      it(`are answered as usual from ${label}`, async () => {
        const session = await freshSession()
        const failures = await walk(
          headers,
          () => ({ cookie: `service_session=${session}` }),
          (res) => !isCrossSiteRefusal(res) && res.status !== 401
        )
        expect(failures).toEqual([])
      })
    }

    it("bearer credentials from any origin are not affected", async () => {
      const token = await freshSession()
      const failures = await walk(
        { origin: EVIL, "sec-fetch-site": "cross-site" },
        () => ({ token }),
        (res) => !isCrossSiteRefusal(res) && res.status !== 401
      )
      expect(failures).toEqual([])
      const orgRoutes = cookieWrites.filter((route) => route.path.startsWith("/v1/orgs/{orgId}"))
      for (const route of orgRoutes) {
        const res = await send(route, { origin: EVIL }, { token: orgKey })
        expect(isCrossSiteRefusal(res), `${route.method} ${route.path}`).toBe(false)
      }
    })

    it("a safe method with the cookie is answered from any origin", async () => {
      const res = await call(world, "GET", "/v1/me", { ...cookie(), headers: { origin: EVIL } })
      expect(res.status).toBe(200)
    })

    it("the cookie counts (and is checked) beside an agent key in the header", async () => {
      const agent = await makeAgent(world, person.token, person.orgId, { name: "Beside" })
      const res = await call(world, "POST", `/v1/orgs/${person.orgId}/agents`, {
        token: agent.key,
        ...cookie(),
        headers: { origin: EVIL },
        body: { name: "forged" }
      })
      expect(isCrossSiteRefusal(res)).toBe(true)
    })
  })

  describe("which requests are the service's own", () => {
    const production = makeOwnOrigin(`${OWN}/`, false)
    const development = makeOwnOrigin("http://localhost:8080", true)

    it("production: only the public address's origin", () => {
      expect(production(OWN)).toBe(true)
      expect(production(`${OWN}:443`)).toBe(true)
      expect(production("http://gateway.example.test")).toBe(false)
      expect(production("https://gateway.example.test:8443")).toBe(false)
      expect(production("https://sub.gateway.example.test")).toBe(false)
      expect(production("http://localhost:8080")).toBe(false)
      expect(production("not a url")).toBe(false)
    })

    it("development: also any loopback origin (127.0.0.1, the dashboard's development server)", () => {
      expect(development("http://localhost:8080")).toBe(true)
      expect(development("http://127.0.0.1:8080")).toBe(true)
      expect(development("http://localhost:5173")).toBe(true)
      expect(development("http://[::1]:8080")).toBe(true)
      expect(development(EVIL)).toBe(false)
      expect(development("http://localhost.evil.example")).toBe(false)
    })

    it("Origin first, then Sec-Fetch-Site, then Referer", () => {
      const site = (headers: Record<string, string>) => requestSite(headers, production)._tag
      expect(site({ origin: OWN, "sec-fetch-site": "cross-site" })).toBe("Own")
      expect(site({ origin: EVIL, "sec-fetch-site": "same-origin" })).toBe("Foreign")
      expect(site({ "sec-fetch-site": "none" })).toBe("Own")
      expect(site({ "sec-fetch-site": "same-origin", referer: `${EVIL}/` })).toBe("Own")
      expect(site({ referer: `${OWN}/dashboard` })).toBe("Own")
      expect(site({ referer: "garbage" })).toBe("Foreign")
      expect(site({})).toBe("Unstated")
    })
  })
}
