import { beforeAll, describe, expect, it } from "vitest"
import { emailFindInput } from "../../Purchasing/support.js"
import { seedAdmin, seedAgent, seedOrg } from "../../support/fixtures.js"
import { balanceOf, expectLedgerInvariant, invariants } from "../../support/ledgerChecks.js"
import { expectError } from "../../support/people.js"
import { call, eventually, topUp } from "../../support/world.js"
import { adminCall, auditOf } from "../support.js"
import { world } from "./world.js"

/** Administrators and orgs: credit adjustments, freezes, plans, endpoint openings, the gateway switch and caps. */
let admin: { adminId: string; token: string }

export const orgsCases = () => {
  beforeAll(async () => {
    admin = await seedAdmin(world.db)
  })

  /** A funded org with a live agent (gateway calls) and a test agent (purchases). */
  const fundedOrg = async (credits = 10_000n) => {
    const org = await seedOrg(world.db)
    await topUp(world, org.orgId, credits)
    const live = await seedAgent(world.db, org.orgId, { mode: "live", monthlyBudgetCredits: 1_000_000n })
    const test = await seedAgent(world.db, org.orgId, { approvalThresholdCredits: null })
    return { org, live, test }
  }
  const gatewayCall = (key: string, endpoint: string) =>
    call(world, "POST", "/v1/call", { token: key, body: { endpoint } })
  const adjust = (orgId: string, body: unknown) =>
    adminCall(world, admin, "POST", `/admin/orgs/${orgId}/credits/adjust`, body)

  describe("credit adjustments", () => {
    it("refuses a zero or fractional amount, a missing reason and an unconfirmed large adjustment", async () => {
      const { org } = await fundedOrg()
      for (const credits of [0, "0", 2.5, "1.5", "ten", ""]) {
        expectError(await adjust(org.orgId, { credits, reason: "goodwill" }), 400, "invalid_amount")
      }
      expectError(await adjust(org.orgId, { credits: 500 }), 400, "reason_required")
      expectError(await adjust(org.orgId, { credits: 500, reason: " " }), 400, "reason_required")
      expectError(await adjust(org.orgId, { credits: 2_000_000, reason: "bulk" }), 409, "confirmation_required")
      expectError(
        await adjust(org.orgId, { credits: 2_000_000, reason: "bulk", confirm_credits: 1_999_999 }),
        409,
        "confirmation_required"
      )
      expectError(await adjust(org.orgId, { credits: -2_000_000, reason: "bulk" }), 409, "confirmation_required")
      expect(await balanceOf(world.db, org.orgId)).toBe(10_000n)
      expect(await auditOf(world.db, org.orgId)).toEqual([])
      expectError(await adjust("7d0f5f39-0000-4000-8000-000000000000", { credits: 5, reason: "x" }), 404, "not_found")
      expectError(await adjust("not-an-id", { credits: 5, reason: "x" }), 404, "not_found")
    })

    it("credits and debits through the ledger, confirmed when large, each audited once, the invariant intact", async () => {
      const { org } = await fundedOrg()
      const credited = await adjust(org.orgId, { credits: 2_500, reason: "Goodwill for an outage" })
      expect(credited.json).toEqual({ org_id: org.orgId, credits: "2500", balance: "12500" })
      const debited = await adjust(org.orgId, { credits: "-500", reason: "Duplicate goodwill" })
      expect(debited.json).toMatchObject({ credits: "-500", balance: "12000" })
      const large = await adjust(org.orgId, {
        credits: 2_000_000,
        reason: "Invoice paid by wire",
        confirm_credits: "2000000"
      })
      expect(large.status).toBe(200)
      expect(await balanceOf(world.db, org.orgId)).toBe(2_012_000n)
      const entries = await world.db.query(
        `SELECT amount::text, note FROM ledger_entries WHERE org_id = $1 AND kind = 'adjustment' ORDER BY created_at`,
        [org.orgId]
      )
      expect(entries.map((e: any) => e.amount)).toEqual(["2500", "-500", "2000000"])
      expect(entries[0].note).toContain("Goodwill for an outage")
      const inv = await invariants(world.db, org.orgId)
      expect(inv.entriesSum).toBe(inv.balance)
      await expectLedgerInvariant(world.db)
      const audit = await auditOf(world.db, org.orgId)
      expect(audit.map((row: any) => [row.action, row.reason])).toEqual([
        ["org.adjust_credits", "Goodwill for an outage"],
        ["org.adjust_credits", "Duplicate goodwill"],
        ["org.adjust_credits", "Invoice paid by wire"]
      ])
      expect(audit[0].before).toEqual({ balance: "10000" })
      expect(audit[0].after).toEqual({ balance: "12500", credits: "2500" })
    })
  })

  describe("freezes", () => {
    it("make calls that spend credits answer credits_frozen while reads work, until unfrozen", async () => {
      const { org, live, test } = await fundedOrg()
      const freeze = (body: unknown) => adminCall(world, admin, "POST", `/admin/orgs/${org.orgId}/credits/freeze`, body)
      expectError(await freeze({}), 400, "reason_required")
      expect((await freeze({ reason: "Chargeback under review" })).json).toEqual({
        org_id: org.orgId,
        credits_frozen: true
      })
      expectError(await gatewayCall(live.key, "fakeprov/ok"), 403, "credits_frozen")
      const buy = () =>
        call(world, "POST", "/v1/execute", {
          token: test.key,
          body: { tool: "hunter-email-finder", inputs: [emailFindInput(1)] }
        })
      // A test agent's purchase moves no credits, so a freeze does not stop it (docs/decisions.md).
      expect((await buy()).status).toBe(200)
      expect((await call(world, "GET", "/v1/agent", { token: live.key })).status).toBe(200)
      const usage = await call(world, "GET", `/v1/orgs/${org.orgId}/usage`, { token: org.owner.sessionToken })
      expect(usage.status).toBe(200)
      expect(usage.json.credits_frozen ?? usage.json.frozen).toBe(true)

      const unfrozen = await adminCall(world, admin, "POST", `/admin/orgs/${org.orgId}/credits/unfreeze`)
      expect(unfrozen.json).toEqual({ org_id: org.orgId, credits_frozen: false })
      expect((await gatewayCall(live.key, "fakeprov/ok")).status).toBe(200)
      expect((await buy()).status).toBe(200)
      await expectLedgerInvariant(world.db)
      expect((await auditOf(world.db, org.orgId)).map((row: any) => row.action)).toEqual([
        "org.freeze_credits",
        "org.unfreeze_credits"
      ])
    })
  })

  describe("plans, openings, the gateway switch and provider caps", () => {
    it("changes an org's plan with a reason", async () => {
      const { org } = await fundedOrg()
      const plan = (body: unknown) => adminCall(world, admin, "PUT", `/admin/orgs/${org.orgId}/plan`, body)
      expectError(await plan({ plan: "pro" }), 400, "reason_required")
      expectError(await plan({ plan: "gold", reason: "x" }), 400, "invalid_input")
      expect((await plan({ plan: "pro", reason: "Design partner" })).json).toEqual({ org_id: org.orgId, plan: "pro" })
      const seen = await call(world, "GET", `/v1/orgs/${org.orgId}`, { token: org.owner.sessionToken })
      expect(seen.json.org.plan).toBe("pro")
      const [line] = await auditOf(world.db, org.orgId)
      expect(line).toMatchObject({ action: "org.set_plan", before: { plan: "payg" }, after: { plan: "pro" } })
    })

    it("opens an on-request endpoint for one org after its owner asks, and closes it again", async () => {
      const asking = await fundedOrg()
      const other = await fundedOrg()
      expectError(await gatewayCall(asking.live.key, "fakeprov/inbox"), 409, "endpoint_on_request")

      const ask = (body: unknown, token = asking.org.owner.sessionToken) =>
        call(world, "POST", `/v1/orgs/${asking.org.orgId}/endpoint-requests`, { token, body })
      expectError(await ask({ endpoint: "fakeprov/ok" }), 400, "invalid_input")
      expectError(await ask({ endpoint: "fakeprov/nothing" }), 404, "not_found")
      const asked = await ask({ endpoint: "fakeprov/inbox", note: "Support inbox for our agent" })
      expect(asked.status).toBe(201)
      expect(asked.json.request).toMatchObject({ endpoint_id: "fakeprov/inbox", status: "pending" })
      // Asking again while pending answers the same request.
      expect((await ask({ endpoint: "fakeprov/inbox" })).json.request.id).toBe(asked.json.request.id)

      const queue = await adminCall(world, admin, "GET", "/admin/opening-requests?status=pending")
      expect(queue.json.requests.map((r: any) => r.id)).toContain(asked.json.request.id)

      const opened = await adminCall(world, admin, "POST", `/admin/orgs/${asking.org.orgId}/openings`, {
        endpoint: "fakeprov/inbox",
        reason: "Vetted use case"
      })
      expect(opened.json).toEqual({ org_id: asking.org.orgId, endpoint_id: "fakeprov/inbox", open: true })
      expect((await gatewayCall(asking.live.key, "fakeprov/inbox")).status).toBe(200)
      expectError(await gatewayCall(other.live.key, "fakeprov/inbox"), 409, "endpoint_on_request")
      const mine = await call(world, "GET", `/v1/orgs/${asking.org.orgId}/endpoint-openings`, {
        token: asking.org.owner.sessionToken
      })
      expect(mine.json.openings.map((o: any) => o.endpoint_id)).toEqual(["fakeprov/inbox"])
      expect(mine.json.requests[0]).toMatchObject({ status: "opened" })
      expectError(await ask({ endpoint: "fakeprov/inbox" }), 409, "conflict")

      const close = (body: unknown) =>
        adminCall(world, admin, "POST", `/admin/orgs/${asking.org.orgId}/openings/fakeprov%2Finbox/close`, body)
      expectError(await close({}), 400, "reason_required")
      expect((await close({ reason: "Use case ended" })).json.open).toBe(false)
      expectError(await gatewayCall(asking.live.key, "fakeprov/inbox"), 409, "endpoint_on_request")
      expect((await auditOf(world.db, asking.org.orgId)).map((row: any) => row.action)).toEqual([
        "endpoint.open",
        "endpoint.close"
      ])
    })

    it("a member cannot ask for an opening, and an administrator declines a request with a reason", async () => {
      const { org } = await fundedOrg()
      const asked = await call(world, "POST", `/v1/orgs/${org.orgId}/endpoint-requests`, {
        token: org.owner.sessionToken,
        body: { endpoint: "fakeprov/inbox" }
      })
      const decline = (body: unknown) =>
        adminCall(world, admin, "POST", `/admin/opening-requests/${asked.json.request.id}/decline`, body)
      expectError(await decline({}), 400, "reason_required")
      expect((await decline({ reason: "Not for this use" })).json.request.status).toBe("declined")
      expectError(await decline({ reason: "again" }), 409, "conflict")
    })

    it("switches the gateway off and on at run time, for every caller within a second", async () => {
      const { live } = await fundedOrg()
      const gateway = (body: unknown) => adminCall(world, admin, "PUT", "/admin/gateway", body)
      expectError(await gateway({ enabled: false }), 400, "reason_required")
      expect((await gateway({ enabled: false, reason: "Provider incident" })).json).toEqual({ enabled: false })
      const off = await eventually(async () => {
        const answer = await gatewayCall(live.key, "fakeprov/ok")
        return answer.status === 503 ? answer : undefined
      }, { what: "the gateway to answer 503" })
      expectError(off, 503, "endpoint_unavailable")
      expect((await gateway({ enabled: true, reason: "Incident over" })).json).toEqual({ enabled: true })
      await eventually(async () => (await gatewayCall(live.key, "fakeprov/ok")).status === 200, {
        what: "the gateway to take calls again"
      })
      expect((await auditOf(world.db, "gateway")).map((row: any) => row.action)).toEqual([
        "gateway.switch_off",
        "gateway.switch_on"
      ])
    })

    it("changes a provider's daily call cap", async () => {
      const { live } = await fundedOrg()
      const cap = (body: unknown, provider = "capped") =>
        adminCall(world, admin, "PUT", `/admin/providers/${provider}/cap`, body)
      expectError(await cap({ daily_call_cap: 0 }), 400, "invalid_input")
      expectError(await cap({ daily_call_cap: 5 }, "nobody"), 404, "not_found")
      expect((await cap({ daily_call_cap: 1, reason: "Provider asked" })).json).toEqual({
        provider_id: "capped",
        daily_call_cap: 1
      })
      // The gateway's endpoint records are cached for 5 seconds.
      await eventually(async () => {
        const first = await gatewayCall(live.key, "capped/ok")
        return first.status === 429 ? first : undefined
      }, { what: "the new cap to apply", intervalMs: 500 })
      expectError(await gatewayCall(live.key, "capped/ok"), 429, "provider_quota")
      expect((await cap({ daily_call_cap: 3 })).status).toBe(200)
    })
  })

  describe("the audit log", () => {
    it("is readable by administrators with filters and pages, and cannot be edited or deleted", async () => {
      const { org } = await fundedOrg()
      for (const reason of ["one", "two", "three"]) await adjust(org.orgId, { credits: 1, reason })
      const page = await adminCall(world, admin, "GET", `/admin/audit?target_id=${org.orgId}&limit=2`)
      expect(page.json.entries.map((e: any) => e.reason)).toEqual(["three", "two"])
      expect(page.json.has_more).toBe(true)
      expect(page.json.entries[0]).toMatchObject({
        admin_id: admin.adminId,
        action: "org.adjust_credits",
        target_type: "org",
        target_id: org.orgId
      })
      const next = await adminCall(
        world,
        admin,
        "GET",
        `/admin/audit?target_id=${org.orgId}&limit=2&starting_after=${page.json.entries[1].id}`
      )
      expect(next.json).toMatchObject({ has_more: false, entries: [{ reason: "one" }] })
      const byAction = await adminCall(world, admin, "GET", "/admin/audit?action=org.adjust_credits&limit=200")
      expect(byAction.json.entries.every((e: any) => e.action === "org.adjust_credits")).toBe(true)

      await expect(world.db.query(`UPDATE admin_audit SET reason = 'edited'`)).rejects.toThrow(/append-only/)
      await expect(world.db.query(`DELETE FROM admin_audit`)).rejects.toThrow(/append-only/)
      expect((await call(world, "GET", "/admin/audit", { token: org.owner.sessionToken })).status).toBe(401)
    })
  })
}
