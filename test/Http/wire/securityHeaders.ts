import { beforeAll, describe, expect, it } from "vitest"
import { Api } from "../../../src/Http/Api.js"
import { dashboardRoutes, extraRoutes } from "../../../src/Http/ExtraRoutes.js"
import { HSTS } from "../../../src/Http/Middleware/SecurityHeaders.js"
import { routesOfApi } from "../../../src/Http/RouteTable.js"
import { ensureDashboardBuilt } from "../../Dashboard/browser.js"
import { emailFindInput } from "../../Purchasing/support.js"
import { seedAgent, seedOrg } from "../../support/fixtures.js"
import { request } from "../../support/server.js"
import { linkIn } from "../../support/smtp.js"
import { call } from "../../support/world.js"
import { production, world as development } from "./world.js"

/**
 * No page of the service may be framed by another site, and production tells browsers to
 * use HTTPS only. Walked over every GET route of the contract and beside it (so a page
 * added later is covered), each asked for HTML as a browser asks.
 */
let approvalToken: string

/** On the suite's production service, and its development one. */
export const securityHeadersCases = () => {
  beforeAll(async () => {
    await ensureDashboardBuilt()
    // A waiting approval, for the page its mailed link opens.
    const org = await seedOrg(production.db)
    const agent = await seedAgent(production.db, org.orgId, { approvalThresholdCredits: 100n })
    const asked = await call(production, "POST", "/v1/execute", {
      token: agent.key,
      body: { tool: "hunter-email-finder", inputs: [emailFindInput(1), emailFindInput(2), emailFindInput(3)] }
    })
    expect(asked.status).toBe(202)
    const mail = await production.smtp.waitFor(org.owner.email, (m) => m.text.includes("Approve: "))
    approvalToken = new URL(linkIn(mail, "/approve")).searchParams.get("token")!
  }, 180_000)

  const getRoutes = [...routesOfApi(Api), ...extraRoutes, ...dashboardRoutes("/dashboard")]
    .filter((route) => route.method === "GET")
    .map((route) => route.path)

  /** A concrete path: the approval page gets a live token, a dashboard wildcard a page of it. */
  const pathOf = (path: string) =>
    path.replace(/:token\b/, approvalToken).replace(/:(\w+)/g, "00000000-0000-4000-8000-000000000000")
      .replace(/\*$/, "keys")

  const asBrowser = { accept: "text/html,application/xhtml+xml,*/*;q=0.8" }

  describe("framing protection", () => {
    it("every HTML answer forbids framing (X-Frame-Options and CSP frame-ancestors)", async () => {
      const html: Array<string> = []
      const problems: Array<string> = []
      for (const world of [production, development]) {
        for (const path of getRoutes) {
          const res = await request(`${world.server.url}${pathOf(path)}`, { headers: asBrowser })
          if (!(res.headers.get("content-type") ?? "").startsWith("text/html")) continue
          if (world === production) html.push(path)
          if (res.headers.get("x-frame-options") !== "DENY") problems.push(`${path}: X-Frame-Options`)
          if (!/(^|;)\s*frame-ancestors 'none'/.test(res.headers.get("content-security-policy") ?? "")) {
            problems.push(`${path}: CSP ${res.headers.get("content-security-policy")}`)
          }
        }
      }
      expect(problems).toEqual([])
      // The walk met every kind of page: front door, docs, the error list, dashboard, mailed link.
      expect(html).toEqual(
        expect.arrayContaining([
          "/",
          "/docs",
          "/docs/errors",
          "/dashboard",
          "/dashboard/*",
          "/v1/approval-links/:token"
        ])
      )
    })

    it("a page's own policy keeps its directives", async () => {
      const shell = await request(`${production.server.url}/dashboard`, { headers: asBrowser })
      const policy = shell.headers.get("content-security-policy")!
      expect(policy).toContain("script-src 'self'")
      expect(policy.match(/frame-ancestors/g)).toHaveLength(1)
    })
  })

  describe("Strict-Transport-Security", () => {
    it("production sends it on every answer: pages, JSON, errors", async () => {
      const answers = await Promise.all(
        ["/", "/docs/errors", "/dashboard", "/v1/tools", "/v1/nowhere", "/v1/me", "/healthz"].map((path) =>
          request(`${production.server.url}${path}`, { headers: asBrowser }).then((res) => [path, res] as const)
        )
      )
      expect(answers.map(([path, res]) => [path, res.headers.get("strict-transport-security")])).toEqual(
        answers.map(([path]) => [path, HSTS])
      )
      expect(HSTS).toBe("max-age=31536000")
    })

    it("development does not (it is served over plain HTTP on loopback)", async () => {
      const res = await request(`${development.server.url}/`, { headers: asBrowser })
      expect(res.headers.get("strict-transport-security")).toBeNull()
    })
  })
}
