import { beforeAll, describe, expect, it } from "vitest"
import { isMissingRecord } from "../../../src/Http/Groups/PathIds.js"
import { seedAdmin, seedAgent, seedOrg } from "../../support/fixtures.js"
import { expectError } from "../../support/people.js"
import { call } from "../../support/world.js"
import { world } from "./world.js"

/**
 * A path id that is not a UUID names no record: the endpoint's path schema decides it before
 * any service runs, and the answer is the unknown id's 404 `not_found` with the record's words,
 * never a 400 or a 500.
 */
export const pathIdsCases = () => {
  let owner: { orgId: string; token: string }
  let agentKey: string
  let agentId: string
  let adminToken: string

  beforeAll(async () => {
    const org = await seedOrg(world.db)
    owner = { orgId: org.orgId, token: org.owner.sessionToken }
    const agent = await seedAgent(world.db, org.orgId)
    agentKey = agent.key
    agentId = agent.agentId
    adminToken = (await seedAdmin(world.db)).token
  }, 60_000)

  describe("path ids", () => {
    it("answer 404 not_found with the record's message when they are not UUIDs", async () => {
      const org = () => `/v1/orgs/${owner.orgId}`
      const cases: ReadonlyArray<readonly [string, string, string, string]> = [
        ["GET", `${org()}/agents/not-a-uuid`, owner.token, "No such agent in this org"],
        ["DELETE", `${org()}/keys/not-a-uuid`, owner.token, "No such active org key"],
        ["PATCH", `${org()}/members/not-a-uuid`, owner.token, "No such member of this org"],
        ["DELETE", `${org()}/invites/not-a-uuid`, owner.token, "No such pending invitation"],
        ["DELETE", `${org()}/webhooks/not-a-uuid`, owner.token, "No such webhook endpoint"],
        ["GET", `${org()}/approvals/not-a-uuid`, owner.token, "No approval with that id"],
        ["GET", `${org()}/receipts/not-a-uuid`, owner.token, "No receipt with that id in this org"],
        ["GET", `${org()}/billing/payments/not-a-uuid`, owner.token, "No such payment"],
        ["POST", `${org()}/billing/payments/not-a-uuid/cancel`, owner.token, "No such payment"],
        ["POST", `${org()}/agents/${agentId}/connections/not-a-uuid/revoke`, owner.token, "No such connection"],
        ["GET", "/v1/jobs/not-a-uuid", agentKey, "No job with that id in this org"],
        ["GET", "/v1/disputes/not-a-uuid", agentKey, "No dispute with that id"],
        ["POST", "/admin/disputes/not-a-uuid/decide", adminToken, "No dispute with that id"],
        // The administrators' endpoints name the value they did not find.
        ["GET", "/admin/benchmark-runs/not-a-uuid", adminToken, "No benchmark run not-a-uuid"],
        ["POST", "/admin/deletion-requests/not-a-uuid/carry-out", adminToken, "No deletion request not-a-uuid"],
        ["POST", "/admin/opening-requests/not-a-uuid/decline", adminToken, "No opening request not-a-uuid"],
        ["POST", "/admin/orgs/not-a-uuid/openings/fakeprov%2Finbox/close", adminToken, "No org not-a-uuid"],
        ["POST", "/admin/orgs/not-a-uuid/credits/freeze", adminToken, "No such org"]
      ]
      for (const [method, path, token, message] of cases) {
        const body = method === "PATCH" ? { role: "member" } : method === "POST" ? { decision: "upheld" } : undefined
        expectError(await call(world, method, path, { token, body }), 404, "not_found", message)
      }
    })

    it("a UUID that names nothing still reaches the service, which answers the same", async () => {
      const unknown = "00000000-0000-4000-8000-000000000000"
      expectError(
        await call(world, "GET", `/v1/orgs/${owner.orgId}/agents/${unknown}`, { token: owner.token }),
        404,
        "not_found",
        "No such agent in this org"
      )
    })

    it("only a path id's message is read as a missing record", () => {
      expect(isMissingRecord("No such webhook endpoint")).toBe(true)
      expect(isMissingRecord("No deletion request not-a-uuid")).toBe(true)
      expect(isMissingRecord("No deletion requests")).toBe(false)
      expect(isMissingRecord("Expected a string, actual 42")).toBe(false)
    })
  })
}
