import { execFile } from "node:child_process"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { beforeAll, describe, expect, it } from "vitest"
import { isFillerDescription } from "../../../src/Http/OpenApi/Filler.js"
import { request } from "../../support/server.js"
import { base as BASE_URL, world } from "./world.js"

const run = promisify(execFile)

let document: any

export const openapiLintCases = () => {
  beforeAll(async () => {
    document = (await request(`${world.server.url}/openapi.json`)).json
  })

  const operations = () =>
    Object.entries<any>(document.paths).flatMap(([path, methods]) =>
      Object.entries<any>(methods).map(([method, operation]) => ({ path, method, operation }))
    )

  describe("the OpenAPI document", () => {
    it("passes @redocly/cli lint (recommended rules) with zero errors", async () => {
      const dir = await mkdtemp(join(tmpdir(), "openapi-"))
      const file = join(dir, "openapi.json")
      await writeFile(file, JSON.stringify(document))
      const { stdout } = await run("node_modules/.bin/redocly", ["lint", file, "--format=json"], {
        env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" }
      }).catch((failure) => failure as { stdout: string })
      await rm(dir, { recursive: true })
      const problems: Array<{ ruleId: string; severity: string; location: Array<{ pointer: string }> }> =
        JSON.parse(stdout).problems
      expect(problems.filter((problem) => problem.severity === "error")).toEqual([])
      // The only warnings left: the browser-only sign-in steps answer redirects, never a 2xx.
      const warnings = problems.map((problem) => `${problem.ruleId} ${problem.location[0]?.pointer}`)
      expect(warnings.sort()).toEqual([
        "operation-2xx-response #/paths/~1auth~1email~1verify/get/responses",
        "operation-2xx-response #/paths/~1auth~1idp~1callback/get/responses",
        "operation-2xx-response #/paths/~1auth~1idp~1start/get/responses"
      ])
    }, 60_000)

    it("names this service's address as its server", () => {
      expect(document.servers).toEqual([{ url: BASE_URL, description: "This service" }])
    })

    it("gives every operation a summary and a description, and every tag a description", () => {
      for (const { method, operation, path } of operations()) {
        expect(operation.summary, `${method} ${path}`).toMatch(/\S/)
        expect(operation.description, `${method} ${path}`).toMatch(/\S/)
      }
      for (const tag of document.tags) expect(tag.description, tag.name).toMatch(/\S/)
    })

    it("has one security scheme per credential, each operation naming the ones it accepts", () => {
      expect(Object.keys(document.components.securitySchemes).sort()).toEqual(
        ["adminSession", "agentKey", "orgKey", "sessionBearer", "sessionCookie"]
      )
      const schemesOf = (method: string, path: string) =>
        document.paths[path][method].security.flatMap((requirement: object) => Object.keys(requirement)).sort()
      expect(schemesOf("post", "/v1/call")).toEqual(["agentKey"])
      expect(schemesOf("get", "/v1/orgs/{orgId}/agents")).toEqual(["orgKey", "sessionBearer", "sessionCookie"])
      expect(schemesOf("get", "/v1/me")).toEqual(["sessionBearer", "sessionCookie"])
      expect(schemesOf("get", "/admin/me")).toEqual(["adminSession"])
      expect(document.paths["/v1/tools"].get.security).toEqual([])
      expect(document.components.securitySchemes.sessionCookie).toMatchObject({ in: "cookie", name: "service_session" })
    })

    it("types every limit query parameter as an integer from 1 to 200", () => {
      const limits = operations().flatMap(({ operation }) =>
        (operation.parameters ?? []).filter((parameter: any) => parameter.name === "limit")
      )
      expect(limits.length).toBeGreaterThanOrEqual(6)
      for (const limit of limits) expect(limit.schema).toMatchObject({ type: "integer", minimum: 1, maximum: 200 })
    })

    it("carries no description the schema library wrote for itself", () => {
      const found: Array<string> = []
      const walk = (node: unknown): void => {
        if (Array.isArray(node)) return node.forEach(walk)
        if (node === null || typeof node !== "object") return
        for (const [key, value] of Object.entries(node)) {
          if (key === "description" && typeof value === "string" && isFillerDescription(value)) found.push(value)
          else walk(value)
        }
      }
      walk(document)
      expect(found).toEqual([])
      expect(JSON.stringify(document)).not.toMatch(/"a (string|number)[ "]/)
    })
  })
}
