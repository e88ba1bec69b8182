import { randomUUID } from "node:crypto"
import { beforeAll, describe, expect, it } from "vitest"
import { newSecret, secretPrefixes } from "../../../src/Domain/Secrets.js"
import { Api } from "../../../src/Http/Api.js"
import { extraRoutes } from "../../../src/Http/ExtraRoutes.js"
import { sha256Hex } from "../../../src/Services/SecretBox/Hashes.js"
import { seedUser } from "../../support/fixtures.js"
import { freshIp, makeAgent, makeOrgKey, owner } from "../../support/people.js"
import { call } from "../../support/world.js"
import { world } from "./world.js"

/**
 * The credential matrix, walked over every route of the API definition (read at run time,
 * so routes other areas add are covered too) and over `/mcp` when it is served. Each route
 * is classified by the credential middleware on its group or endpoint.
 */
type Kind = "agent" | "org" | "account" | "admin" | "public"

interface Route {
  readonly method: string
  readonly path: string
  readonly kind: Kind
  /** Org endpoints that refuse every org key (`/keys...`, `POST /deletion-requests`). */
  readonly sessionOnly: boolean
}

const routes: Array<Route> = []
for (const group of Object.values((Api as any).groups) as Array<any>) {
  for (const endpoint of Object.values(group.endpoints) as Array<any>) {
    const tags = new Set([...group.middlewares, ...endpoint.middlewares].map((tag: any) => tag.key as string))
    const kind: Kind = tags.has("AgentAuth")
      ? "agent"
      : tags.has("OrgAuth")
      ? "org"
      : tags.has("SessionAuth")
      ? "account"
      : tags.has("AdminAuth")
      ? "admin"
      : "public"
    routes.push({ method: endpoint.method, path: endpoint.path, kind, sessionOnly: tags.has("SessionOnly") })
  }
}
const mcpServed = extraRoutes.some((route) => route.path === "/mcp" && route.method === "POST")
if (mcpServed) routes.push({ method: "POST", path: "/mcp", kind: "agent", sessionOnly: false })

const byKind = (kind: Kind) => routes.filter((route) => route.kind === kind)
const writes = new Set(["POST", "PUT", "PATCH", "DELETE"])

/** Every credential the matrix sends. */
let c: {
  orgA: string
  orgB: string
  session: string
  outsiderSession: string
  readKey: string
  writeKey: string
  otherOrgKey: string
  revokedOrgKey: string
  agentKey: string
  allowlistedAgentKey: string
  disabledAgentKey: string
  revokedAgentKey: string
  rotatedAwayAgentKey: string
  adminSession: string
}

export const matrixCases = () => {
  beforeAll(async () => {
    const a = await owner(world, "Org A")
    const b = await owner(world, "Org B")
    const outsider = await owner(world, "Outsider")
    const readKey = await makeOrgKey(world, a.token, a.orgId, "read")
    const writeKey = await makeOrgKey(world, a.token, a.orgId, "write")
    const otherOrgKey = await makeOrgKey(world, b.token, b.orgId, "write")
    const revokedOrgKey = await makeOrgKey(world, a.token, a.orgId, "write")
    await call(world, "DELETE", `/v1/orgs/${a.orgId}/keys/${revokedOrgKey.id}`, { token: a.token })
    const agent = await makeAgent(world, a.token, a.orgId, { name: "Plain" })
    const allowlisted = await makeAgent(world, a.token, a.orgId, {
      name: "Fenced",
      ip_allowlist: ["192.0.2.1", "2001:db8::/48"]
    })
    const disabled = await makeAgent(world, a.token, a.orgId, { name: "Disabled" })
    await call(world, "PATCH", `/v1/orgs/${a.orgId}/agents/${disabled.id}`, {
      token: a.token,
      body: { status: "disabled" }
    })
    const revoked = await makeAgent(world, a.token, a.orgId, { name: "Revoked" })
    await call(world, "POST", `/v1/orgs/${a.orgId}/agents/${revoked.id}/revoke-key`, { token: a.token })
    const rotated = await makeAgent(world, a.token, a.orgId, { name: "Rotated" })
    await call(world, "POST", `/v1/orgs/${a.orgId}/agents/${rotated.id}/rotate-key`, { token: a.token })
    await world.db.query(
      `INSERT INTO admins (id, email, password_hash, totp_sealed, created_at) VALUES ($1, 'matrix-admin@example.com', 'x', 'x', now())`,
      [adminId]
    )
    const adminSession = await newAdminSession()
    c = {
      orgA: a.orgId,
      orgB: b.orgId,
      session: a.token,
      outsiderSession: outsider.token,
      readKey: readKey.secret,
      writeKey: writeKey.secret,
      otherOrgKey: otherOrgKey.secret,
      revokedOrgKey: revokedOrgKey.secret,
      agentKey: agent.key,
      allowlistedAgentKey: allowlisted.key,
      disabledAgentKey: disabled.key,
      revokedAgentKey: revoked.key,
      rotatedAwayAgentKey: rotated.key,
      adminSession
    }
  }, 180_000)

  const adminId = randomUUID()
  /** An administrator session, as POST /admin/sign-in makes them (sign-in itself is covered in the administrators section, admin.ts). */
  const newAdminSession = async () => {
    const token = newSecret(secretPrefixes.adminSession)
    await world.db.query(
      `INSERT INTO admin_sessions (id, admin_id, token_hash, created_at, expires_at) VALUES ($1, $2, $3, now(), now() + interval '1 hour')`,
      [randomUUID(), adminId, sha256Hex(token)]
    )
    return token
  }

  /** A concrete path: `:orgId` becomes the given org, any other parameter a fresh UUID. */
  const pathOf = (route: Route, orgId: string) =>
    route.path.replace(/:(\w+)/g, (_match, name: string) => (name === "orgId" ? orgId : randomUUID()))

  /** Sends `route` with `credential`; each request from its own address (trusted proxy). */
  const send = (route: Route, credential: { token?: string; cookie?: string; ip?: string }, orgId = c.orgA) =>
    call(world, route.method, pathOf(route, orgId), {
      token: credential.token,
      cookie: credential.cookie,
      ip: credential.ip ?? freshIp(),
      ...(writes.has(route.method) ? { body: {} } : {}),
      headers: route.path === "/mcp" ? { accept: "application/json, text/event-stream" } : {}
    })

  interface Expectation {
    readonly status: number
    readonly code: string
    readonly messages?: ReadonlyArray<string>
  }

  /** Walks `routes` and collects every mismatch, so one run reports them all. */
  const walk = async (
    label: string,
    list: ReadonlyArray<Route>,
    credential: (route: Route) => { token?: string; cookie?: string; ip?: string },
    expected: (route: Route) => Expectation,
    orgId?: string
  ) => {
    const failures: Array<string> = []
    for (const route of list) {
      const res = await send(route, credential(route), orgId)
      const want = expected(route)
      const ok = res.status === want.status && res.json?.error?.code === want.code &&
        (want.messages === undefined || want.messages.includes(res.json?.error?.message))
      if (!ok) failures.push(`${route.method} ${route.path}: ${res.status} ${res.text.slice(0, 160)}`)
    }
    expect(failures, `${label}:\n${failures.join("\n")}`).toEqual([])
    return list.length
  }

  const unauthenticated = { status: 401, code: "unauthenticated" }
  const forbidden = { status: 403, code: "forbidden" }

  describe("the credential matrix over every route", () => {
    it("finds the routes of every kind, /mcp included when served", () => {
      expect(byKind("agent").map((r) => r.path)).toContain("/v1/agent")
      expect(byKind("org").length).toBeGreaterThan(10)
      expect(byKind("account").map((r) => r.path)).toEqual(
        expect.arrayContaining(["/v1/me", "/v1/orgs", "/auth/logout"])
      )
      expect(byKind("admin").map((r) => r.path)).toContain("/admin/me")
      expect(byKind("public").map((r) => r.path)).toEqual(expect.arrayContaining(["/auth/email/start", "/v1/tools"]))
      if (mcpServed) expect(byKind("agent").map((r) => r.path)).toContain("/mcp")
    })

    it("nothing -> agent endpoint: 401 unauthenticated", () =>
      walk("nothing to agent endpoints", byKind("agent"), () => ({}), () => unauthenticated))

    it("nothing -> account, org and admin endpoints: 401 unauthenticated", () =>
      walk("nothing", [...byKind("account"), ...byKind("org"), ...byKind("admin")], () => ({}), () => unauthenticated))

    it("agent key -> account, org and admin endpoints: 401 unauthenticated", () =>
      walk(
        "agent key",
        [...byKind("account"), ...byKind("org"), ...byKind("admin")],
        () => ({ token: c.agentKey }),
        () => unauthenticated
      ))

    it("session token (header or cookie) -> agent and admin endpoints: 401 unauthenticated", async () => {
      await walk(
        "session header",
        [...byKind("agent"), ...byKind("admin")],
        () => ({ token: c.session }),
        () => unauthenticated
      )
      await walk(
        "session cookie",
        [...byKind("agent"), ...byKind("admin")],
        () => ({ cookie: `service_session=${c.session}` }),
        () => unauthenticated
      )
    })

    it("org key -> anything outside its org's /v1/orgs/{orgId}/...: 403 forbidden", async () => {
      for (const key of [c.readKey, c.writeKey]) {
        await walk(
          "org key outside its org",
          [...byKind("agent"), ...byKind("account"), ...byKind("admin")],
          () => ({ token: key }),
          () => forbidden
        )
        await walk("org key in another org", byKind("org"), () => ({ token: key }), () => forbidden, c.orgB)
      }
    })

    it("org key -> /keys... and POST /deletion-requests of its own org: 403 forbidden", async () => {
      const sessionOnly = byKind("org").filter((route) => route.sessionOnly)
      expect(sessionOnly.map((r) => `${r.method} ${r.path}`)).toEqual(
        expect.arrayContaining([
          "POST /v1/orgs/:orgId/keys",
          "GET /v1/orgs/:orgId/keys",
          "POST /v1/orgs/:orgId/deletion-requests"
        ])
      )
      for (const key of [c.readKey, c.writeKey]) {
        await walk("org key on session-only routes", sessionOnly, () => ({ token: key }), () => forbidden)
      }
    })

    it("read org key -> POST, PUT, PATCH, DELETE: 403 forbidden (This org key is read-only)", () =>
      walk(
        "read key writes",
        byKind("org").filter((route) => writes.has(route.method)),
        () => ({ token: c.readKey }),
        (route) => ({
          ...forbidden,
          messages: route.sessionOnly
            ? ["This org key is read-only", "Org keys cannot do this; sign in as an owner"]
            : ["This org key is read-only"]
        })
      ))

    it("agent key outside its allowlist -> agent endpoint: 403 ip_not_allowed", () =>
      walk(
        "allowlist",
        byKind("agent"),
        () => ({ token: c.allowlistedAgentKey, ip: freshIp() }),
        () => ({ status: 403, code: "ip_not_allowed" })
      ))

    it("disabled agent, revoked key, rotated-away key -> agent endpoint: 401 Invalid or revoked API key", async () => {
      for (const key of [c.disabledAgentKey, c.revokedAgentKey, c.rotatedAwayAgentKey, "sk_test_unknown"]) {
        await walk("bad agent key", byKind("agent"), () => ({ token: key }), () => ({
          ...unauthenticated,
          messages: ["Invalid or revoked API key"]
        }))
      }
    })

    it("revoked or unknown org key -> org endpoints: 401 Unknown or revoked org key", async () => {
      for (const key of [c.revokedOrgKey, "ok_unknown"]) {
        await walk("bad org key", byKind("org"), () => ({ token: key }), () => ({
          ...unauthenticated,
          messages: ["Unknown or revoked org key"]
        }))
      }
    })

    it("administrator session -> agent, account and org endpoints: 401 unauthenticated", () =>
      walk(
        "admin session",
        [...byKind("agent"), ...byKind("account"), ...byKind("org")],
        () => ({ token: c.adminSession }),
        () => unauthenticated
      ))

    it("a session of someone outside the org -> its org endpoints: 404 not_found", () =>
      walk("outsider", byKind("org"), () => ({ token: c.outsiderSession }), () => ({ status: 404, code: "not_found" })))

    it("the right credential passes the credential check on every route", async () => {
      const failures: Array<string> = []
      const check = async (route: Route, credential: { token?: string }) => {
        const res = await send(route, credential)
        if (res.status === 401 || ["unauthenticated", "ip_not_allowed"].includes(res.json?.error?.code)) {
          failures.push(`${route.method} ${route.path}: ${res.status} ${res.text.slice(0, 160)}`)
        }
      }
      for (const route of byKind("agent")) await check(route, { token: c.agentKey })
      for (const route of byKind("org")) await check(route, { token: c.session })
      // A fresh session per request: sign-out would end a shared one.
      for (const route of byKind("admin")) await check(route, { token: await newAdminSession() })
      for (const route of byKind("account")) {
        await check(route, { token: (await seedUser(world.db)).sessionToken })
      }
      expect(failures, failures.join("\n")).toEqual([])
    })

    it("public data and sign-in endpoints ignore every credential but org keys: the same answer as with none", async () => {
      const failures: Array<string> = []
      for (const route of byKind("public")) {
        const none = await send(route, {})
        for (const token of [c.agentKey, c.session, c.adminSession]) {
          const res = await send(route, { token })
          if (
            res.status !== none.status ||
            ["unauthenticated", "forbidden", "ip_not_allowed"].includes(res.json?.error?.code)
          ) {
            failures.push(`${route.method} ${route.path}: ${res.status} with a credential, ${none.status} without`)
          }
        }
      }
      expect(failures, failures.join("\n")).toEqual([])
    })

    it("org key -> public data and sign-in endpoints (outside its org's paths): 403 forbidden", async () => {
      for (const key of [c.readKey, c.writeKey, "ok_unknown"]) {
        await walk("org key on public routes", byKind("public"), () => ({ token: key }), () => forbidden)
      }
    })
  })
}
