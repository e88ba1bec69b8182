import { beforeAll, describe, expect, it } from "vitest"
import { emailFindInput, eventsOf, seedBuyer } from "../../Purchasing/support.js"
import { seedAdmin } from "../../support/fixtures.js"
import { expectError } from "../../support/people.js"
import {} from "../../support/shiftableClock.js"
import { call, eventually } from "../../support/world.js"
import { adminCall, auditOf, writeBenchmark } from "../support.js"
import { world } from "./world.js"

/** Tools as administrators run them: publishing gates, adapter checks, pauses, price changes, all audited. */
let admin: { adminId: string; token: string }

export const toolsCases = () => {
  beforeAll(async () => {
    admin = await seedAdmin(world.db)
  })

  const execute = (key: string, body: unknown) => call(world, "POST", "/v1/execute", { token: key, body })
  const publicTool = async (slug: string) =>
    (await call(world, "GET", "/v1/tools")).json.tools.find((tool: any) => tool.slug === slug)
  const scoredSlugs = async () =>
    (await call(world, "GET", "/v1/scores?task_type=email_find")).json.scores.map((score: any) => score.slug)

  const newTool = {
    slug: "acme-email-finder",
    name: "Acme Email Finder",
    provider: "fakeprov",
    provider_name: "Fake provider",
    task_type: "email_find",
    description: "Finds work emails.",
    resale_rights: false,
    gateway_endpoint: "fakeprov/ok",
    input: { required: ["first_name", "last_name", "domain"], optional: [] },
    check: { id: "email_find.deliverable_address", version: "1.2.0", verifies: "A deliverable address." }
  }

  describe("publishing gates", () => {
    it("answers each gate's error in turn, then makes the tool live and sold; every step is audited", async () => {
      const created = await adminCall(world, admin, "POST", "/admin/tools", newTool)
      expect(created.status).toBe(201)
      const tool = created.json.tool
      expect(tool).toMatchObject({ status: "information_only", purchasable: false, latest_benchmark: null })
      const publish = () => adminCall(world, admin, "POST", `/admin/tools/${tool.slug}/publish`)
      // Listed publicly at once, before any benchmark; scored and recommended only once it has one.
      expect(await publicTool(tool.slug)).toMatchObject({
        id: tool.id,
        status: "information_only",
        purchasable: false,
        unavailable_reasons: ["information_only"],
        latest_benchmark: null
      })
      expect(await scoredSlugs()).not.toContain(tool.slug)

      expectError(await publish(), 409, "resale_rights_missing")
      expect((await adminCall(world, admin, "PATCH", `/admin/tools/${tool.id}`, { resale_rights: true })).status)
        .toBe(200)
      expectError(await publish(), 409, "price_missing")
      const priced = await adminCall(world, admin, "POST", `/admin/tools/${tool.id}/price`, {
        price_per_success_credits: 45
      })
      expect(priced.status).toBe(200)
      expect(priced.json).toMatchObject({ notified_orgs: 0, tool: { price_per_success_credits: "45" } })

      world.fake.setDown("fakeprov", true)
      const down = await publish()
      expectError(down, 409, "adapter_not_ready")
      expect(down.json.error.message).toContain("fakeprov answered HTTP 503")
      world.fake.setDown("fakeprov", false)

      expectError(await publish(), 409, "benchmark_missing")
      await writeBenchmark(world.db, tool.id, 0.55, 40)
      expectError(
        await publish(),
        409,
        "benchmark_missing",
        "acme-email-finder cannot be sold: the tool has no benchmark in the last 35 days (latest " +
          (await dayAgo(40)) +
          ")"
      )
      await writeBenchmark(world.db, tool.id, 0.55)
      expectError(await publish(), 409, "below_accuracy_floor")
      await writeBenchmark(world.db, tool.id, 0.81)
      expect((await publicTool(tool.slug)).latest_benchmark).toMatchObject({ accuracy: 0.81, sample_size: 200 })
      expect(await scoredSlugs()).toContain(tool.slug)

      const live = await publish()
      expect(live.status).toBe(200)
      expect(live.json.tool).toMatchObject({
        status: "live",
        purchasable: true,
        unavailable_reasons: [],
        adapter: { ok: true }
      })
      expect(await publicTool(tool.slug)).toMatchObject({ purchasable: true, unavailable_reasons: [] })
      const { agent } = await seedBuyer(world)
      const bought = await execute(agent.key, { tool: tool.slug, inputs: [emailFindInput(1)] })
      expect(bought.status).toBe(200)
      expect(bought.json.charged.credits).toBe("45")

      // Only actions that took effect are written; refused attempts leave no line.
      const actions = (await auditOf(world.db, tool.id)).map((row: any) => row.action)
      expect(actions).toEqual(["tool.create", "tool.update", "tool.price", "tool.publish"])
      const [publishLine] = await world.db.query(
        `SELECT admin_id, before, after FROM admin_audit WHERE target_id = $1 AND action = 'tool.publish'`,
        [tool.id]
      )
      expect(publishLine.admin_id).toBe(admin.adminId)
      expect(publishLine.before.status).toBe("information_only")
      expect(publishLine.after.status).toBe("live")
    })

    it("a live tool whose adapter fails its health check stops being sold, and is sold again when it passes", async () => {
      const { agent } = await seedBuyer(world)
      world.fake.setDown("fakeprov", true)
      const checked = await adminCall(world, admin, "POST", "/admin/tools/acme-email-finder/check-adapter")
      expect(checked.json.adapter).toEqual({ ok: false, problem: "fakeprov answered HTTP 503" })
      expect(await publicTool("acme-email-finder")).toMatchObject({
        purchasable: false,
        unavailable_reasons: ["adapter_not_ready"]
      })
      const refused = await execute(agent.key, { tool: "acme-email-finder", inputs: [emailFindInput(2)] })
      expectError(refused, 409, "tool_unavailable")
      expect(refused.json.error.message).toContain("failed its health check")
      world.fake.setDown("fakeprov", false)
      await adminCall(world, admin, "POST", "/admin/tools/acme-email-finder/check-adapter")
      expect((await execute(agent.key, { tool: "acme-email-finder", inputs: [emailFindInput(3)] })).status).toBe(200)
    })

    it("the adapter check needs the provider's credential: unset or blank, it fails naming the setting", async () => {
      const created = await adminCall(world, admin, "POST", "/admin/tools", {
        ...newTool,
        slug: "body-company-lookup",
        gateway_endpoint: "fakebody/lookup",
        resale_rights: true
      })
      expect(created.status).toBe(201)
      const tool = created.json.tool
      await adminCall(world, admin, "POST", `/admin/tools/${tool.id}/price`, { price_per_success_credits: 30 })
      await writeBenchmark(world.db, tool.id, 0.81)

      // The provider answers (the 5xx half passes): the missing credential alone refuses.
      const checked = await adminCall(world, admin, "POST", `/admin/tools/${tool.slug}/check-adapter`)
      expect(checked.status).toBe(200)
      expect(checked.json.adapter).toEqual({ ok: false, problem: "PROVIDER_FAKEBODY_API_KEY is not set" })
      const refused = await adminCall(world, admin, "POST", `/admin/tools/${tool.slug}/publish`)
      expectError(
        refused,
        409,
        "adapter_not_ready",
        "body-company-lookup cannot be sold: the tool's provider connection failed its health check: " +
          "PROVIDER_FAKEBODY_API_KEY is not set"
      )

      // A live tool whose credential is blank stops being sold once checked.
      const blank = await adminCall(world, admin, "POST", "/admin/tools/firecrawl-scrape/check-adapter")
      expect(blank.json.adapter).toEqual({ ok: false, problem: "PROVIDER_FIRECRAWL_API_KEY is not set" })
      expect(await publicTool("firecrawl-scrape")).toMatchObject({
        purchasable: false,
        unavailable_reasons: ["adapter_not_ready"]
      })

      // With the credential set the same check passes, and no answer carries its value.
      const set = await adminCall(world, admin, "POST", "/admin/tools/hunter-email-verifier/check-adapter")
      expect(set.json.adapter).toEqual({ ok: true, problem: null })
      world.fake.setDown("hunter", true)
      const down = await adminCall(world, admin, "POST", "/admin/tools/hunter-email-verifier/check-adapter")
      world.fake.setDown("hunter", false)
      expect(down.json.adapter).toEqual({ ok: false, problem: "hunter answered HTTP 503" })
      for (const answer of [checked, refused, blank, set, down]) expect(answer.text).not.toContain("secret-tools")
    })

    it("refuses bad tool definitions and unknown tools", async () => {
      const duplicate = await adminCall(world, admin, "POST", "/admin/tools", newTool)
      expectError(duplicate, 409, "conflict")
      const unknownEndpoint = await adminCall(world, admin, "POST", "/admin/tools", {
        ...newTool,
        slug: "other-tool",
        gateway_endpoint: "nowhere/none"
      })
      expectError(unknownEndpoint, 400, "invalid_input")
      expectError(
        await adminCall(world, admin, "POST", "/admin/tools", { ...newTool, slug: "Bad Slug" }),
        400,
        "invalid_input"
      )
      expectError(await adminCall(world, admin, "POST", "/admin/tools/no-such-tool/publish"), 404, "not_found")
      // Agents and members are not administrators.
      const { agent, org } = await seedBuyer(world)
      expect((await call(world, "GET", "/admin/tools", { token: agent.key })).status).toBe(401)
      expect((await call(world, "GET", "/admin/tools", { token: org.owner.sessionToken })).status).toBe(401)
    })
  })

  /** YYYY-MM-DD of `days` days before today, as the database counts days. */
  const dayAgo = async (days: number) =>
    (await world.db.query(`SELECT to_char(current_date - $1::int, 'YYYY-MM-DD') AS day`, [days]))[0].day as string

  describe("pausing and resuming", () => {
    it("needs a reason, answers tool_paused, tells only the orgs that used the tool, and resumes through the gates", async () => {
      const user = await seedBuyer(world)
      const bystander = await seedBuyer(world)
      // The audit lines this case adds (the suite's other sections may have audited the tool before).
      const auditedBefore = (await auditOf(world.db, (await publicTool("hunter-email-finder")).id)).length
      expect((await execute(user.agent.key, { tool: "hunter-email-finder", inputs: [emailFindInput(4)] })).status)
        .toBe(200)

      expectError(
        await adminCall(world, admin, "POST", "/admin/tools/hunter-email-finder/pause", {}),
        400,
        "reason_required"
      )
      expectError(
        await adminCall(world, admin, "POST", "/admin/tools/hunter-email-finder/pause", { reason: "   " }),
        400,
        "reason_required"
      )
      const paused = await adminCall(world, admin, "POST", "/admin/tools/hunter-email-finder/pause", {
        reason: "Provider outage"
      })
      expect(paused.status).toBe(200)
      expect(paused.json.tool).toMatchObject({ status: "paused", paused_reason: "Provider outage", purchasable: false })
      expect(paused.json.notified_orgs).toBeGreaterThanOrEqual(1)

      const refused = await execute(user.agent.key, { tool: "hunter-email-finder", inputs: [emailFindInput(5)] })
      expectError(refused, 409, "tool_paused")
      expect(await publicTool("hunter-email-finder")).toMatchObject({
        status: "paused",
        purchasable: false,
        unavailable_reasons: ["tool_paused"],
        paused_reason: "Provider outage"
      })

      const hunterId = (await publicTool("hunter-email-finder")).id
      expect(await eventsOf(world.db, user.org.orgId, "tool.paused")).toEqual([
        { tool_id: hunterId, tool_name: "Hunter Email Finder", reason: "Provider outage" }
      ])
      expect(await eventsOf(world.db, bystander.org.orgId, "tool.paused")).toEqual([])
      const mail = await eventually(() =>
        world.smtp.messages.find((m) => m.to.includes(user.org.owner.email) && m.subject.includes("Tool paused"))
      )
      expect(mail.text).toContain("Provider outage")
      expect(world.smtp.messages.some((m) => m.to.includes(bystander.org.owner.email))).toBe(false)

      // Resuming re-checks the gates.
      world.fake.setDown("hunter", true)
      expectError(
        await adminCall(world, admin, "POST", "/admin/tools/hunter-email-finder/resume"),
        409,
        "adapter_not_ready"
      )
      world.fake.setDown("hunter", false)
      const resumed = await adminCall(world, admin, "POST", "/admin/tools/hunter-email-finder/resume")
      expect(resumed.json.tool).toMatchObject({ status: "live", paused_reason: null, purchasable: true })
      expect((await execute(user.agent.key, { tool: "hunter-email-finder", inputs: [emailFindInput(6)] })).status)
        .toBe(200)
      const actions = (await auditOf(world.db, hunterId)).slice(auditedBefore).map((
        row: any
      ) => [row.action, row.reason])
      expect(actions).toEqual([["tool.pause", "Provider outage"], ["tool.resume", null]])
    })
  })

  describe("price changes", () => {
    it("take effect at valid_from, tell the orgs that used the tool, and leave granted approvals at their amount", async () => {
      const user = await seedBuyer(world)
      const bystander = await seedBuyer(world)
      const approver = await seedBuyer(world, { approvalThresholdCredits: 100n })
      const inputs = [emailFindInput(7), emailFindInput(8), emailFindInput(9)]
      expect((await execute(user.agent.key, { tool: "hunter-email-finder", inputs: [inputs[0]] })).json.charged.credits)
        .toBe("40")
      // An approval granted at the old price: 3 x 40.
      const asked = await execute(approver.agent.key, { tool: "hunter-email-finder", inputs })
      expect(asked.status).toBe(202)
      const approvalId = asked.json.approval.id
      await call(world, "POST", `/v1/orgs/${approver.org.orgId}/approvals/${approvalId}/approve`, {
        token: approver.org.owner.sessionToken,
        body: {}
      })

      const price = (body: unknown) => adminCall(world, admin, "POST", "/admin/tools/hunter-email-finder/price", body)
      expectError(await price({ price_per_success_credits: 0 }), 400, "invalid_amount")
      expectError(await price({ price_per_success_credits: 2.5 }), 400, "invalid_amount")
      expectError(
        await price({ price_per_success_credits: 50, valid_from: new Date(Date.now() - 60_000).toISOString() }),
        400,
        "invalid_input"
      )
      const validFrom = new Date(Date.now() + 3_000).toISOString()
      const changed = await price({
        price_per_success_credits: 50,
        valid_from: validFrom,
        reason: "Provider raised costs"
      })
      expect(changed.status).toBe(200)
      expect(changed.json.tool).toMatchObject({
        price_per_success_credits: "40",
        next_price: { credits: "50", valid_from: validFrom }
      })
      const hunterId = changed.json.tool.id
      expect(await eventsOf(world.db, user.org.orgId, "price.changed")).toEqual([
        {
          tool_id: hunterId,
          tool_name: "Hunter Email Finder",
          old_credits: "40",
          new_credits: "50",
          valid_from: validFrom
        }
      ])
      expect(await eventsOf(world.db, bystander.org.orgId, "price.changed")).toEqual([])

      // Before valid_from the old price, after it the new one.
      const before = await execute(user.agent.key, { tool: "hunter-email-finder", inputs: [inputs[1]] })
      expect(before.json.charged.credits).toBe("40")
      await eventually(() => Date.now() >= Date.parse(validFrom) + 50)
      const after = await execute(user.agent.key, { tool: "hunter-email-finder", inputs: [inputs[2]] })
      expect(after.json.charged.credits).toBe("50")
      expect(await publicTool("hunter-email-finder")).toMatchObject({ price_per_success: { credits: "50" } })

      // The approval keeps the 120 credits it locked.
      const approved = await execute(approver.agent.key, {
        tool: "hunter-email-finder",
        inputs,
        approval_id: approvalId
      })
      expect(approved.status).toBe(200)
      expect(approved.json.charged.credits).toBe("120")
      // A new request for the same items now costs 150 and needs a new approval.
      expect((await execute(approver.agent.key, { tool: "hunter-email-finder", inputs })).json.approval.amount)
        .toMatchObject({
          credits: "150"
        })
      // Back to 40 for the other suites' arithmetic.
      expect((await price({ price_per_success_credits: 40, reason: "restore" })).status).toBe(200)
    })
  })
}
