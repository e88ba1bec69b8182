import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { addMember, seedAgent, seedOrgKey, seedUser } from "../support/fixtures.js"
import { seedAdmin } from "../support/fixtures.js"
import { call, startWorld, type World } from "../support/world.js"
import { emailFindInput, eventsOf, seedBuyer } from "./support.js"

let world: World
let admin: { adminId: string; token: string }
beforeAll(async () => {
  world = await startWorld("preceipts", { smtp: true })
  admin = await seedAdmin(world.db)
})
afterAll(async () => {
  await world?.close()
})

const execute = (key: string, body: unknown) => call(world, "POST", "/v1/execute", { token: key, body })
const dispute = (key: string, body: unknown) => call(world, "POST", "/v1/disputes", { token: key, body })
const decide = (id: string, body: unknown, token = admin.token) =>
  call(world, "POST", `/admin/disputes/${id}/decide`, { token, body })
const spentOf = async (agentId: string) =>
  (await world.db.query(`SELECT spent FROM agent_month_spend WHERE agent_id = $1`, [agentId]))[0]?.spent ?? "0"

/** A purchase of three results: passed, partial, failed. */
const buyMixed = async (key: string) => {
  const answer = await execute(key, {
    tool: "hunter-email-finder",
    inputs: [emailFindInput(1), emailFindInput(2, "mock-partial"), emailFindInput(3, "mock-fail")]
  })
  expect(answer.status).toBe(200)
  return answer.json.receipt_id as string
}

describe("receipts", () => {
  it("lists the org's receipts newest first with a cursor, for agents, members and org keys", async () => {
    const { agent, org } = await seedBuyer(world)
    const colleague = await seedAgent(world.db, org.orgId, { approvalThresholdCredits: null })
    const ids: Array<string> = []
    for (let i = 0; i < 3; i++) {
      const answer = await execute(i === 1 ? colleague.key : agent.key, {
        tool: "jina-reader",
        inputs: [{ url: `https://x.example.com/${i}` }]
      })
      ids.push(answer.json.receipt_id)
    }
    const all = await call(world, "GET", "/v1/receipts", { token: agent.key })
    expect(all.status).toBe(200)
    expect(all.json.receipts.map((r: any) => r.id)).toEqual([...ids].reverse())
    expect(all.json.has_more).toBe(false)
    const page1 = await call(world, "GET", "/v1/receipts?limit=2", { token: agent.key })
    expect(page1.json.receipts.map((r: any) => r.id)).toEqual([ids[2], ids[1]])
    expect(page1.json.has_more).toBe(true)
    const page2 = await call(world, "GET", `/v1/receipts?limit=2&starting_after=${ids[1]}`, { token: agent.key })
    expect(page2.json.receipts.map((r: any) => r.id)).toEqual([ids[0]])
    expect(all.json.receipts[0]).toMatchObject({
      org_id: org.orgId,
      mode: "test",
      tool: { slug: "jina-reader" },
      task_type: "web_extract",
      status: "done",
      item_count: 1,
      price_per_item: { credits: "3", usd: "0.003" },
      charged: { credits: "3", usd: "0.003" },
      refunded: { credits: "0", usd: "0.000" }
    })
    expect(all.json.receipts[0]).not.toHaveProperty("items")

    const member = await seedUser(world.db)
    await addMember(world.db, org.orgId, member.userId, "member")
    const readKey = await seedOrgKey(world.db, org.orgId, member, "read")
    for (const token of [org.owner.sessionToken, member.sessionToken, readKey.secret]) {
      const list = await call(world, "GET", `/v1/orgs/${org.orgId}/receipts`, { token })
      expect(list.status).toBe(200)
      expect(list.json.receipts.map((r: any) => r.id)).toEqual([...ids].reverse())
      const one = await call(world, "GET", `/v1/orgs/${org.orgId}/receipts/${ids[0]}`, { token })
      expect(one.json.receipt.items).toHaveLength(1)
    }
    const stranger = await seedBuyer(world)
    expect((await call(world, "GET", `/v1/receipts/${ids[0]}`, { token: stranger.agent.key })).status).toBe(404)
    // Another org's owner does not see that the org exists.
    expect(
      (await call(world, "GET", `/v1/orgs/${org.orgId}/receipts`, { token: stranger.org.owner.sessionToken })).status
    )
      .toBe(404)
    expect((await call(world, "GET", "/v1/receipts?starting_after=nope", { token: agent.key })).status).toBe(404)
  })

  it("records per item provider, cost, result hash, check version, outcome and refund", async () => {
    const { agent } = await seedBuyer(world)
    const id = await buyMixed(agent.key)
    const { json } = await call(world, "GET", `/v1/receipts/${id}`, { token: agent.key })
    expect(json.receipt).toMatchObject({ charged: { credits: "80" }, counts: { passed: 1, partial: 1, failed: 1 } })
    expect(
      json.receipt.items.map((i: any) => [i.outcome, i.provider, i.cost.credits, i.refund.credits, i.check.version])
    )
      .toEqual([
        ["passed", "hunter", "40", "0", "1.2.0"],
        ["partial", "hunter", "40", "0", "1.2.0"],
        ["failed", "hunter", "0", "0", "1.2.0"]
      ])
    expect(json.receipt.items.every((i: any) => /^[0-9a-f]{64}$/.test(i.result_hash))).toBe(true)
  })
})

describe("a receipt's items with inputs and results", () => {
  it("lists them by index, a page at a time, for the org's members and org keys only", async () => {
    const { agent, org } = await seedBuyer(world)
    const id = await buyMixed(agent.key)
    const path = `/v1/orgs/${org.orgId}/receipts/${id}/items`
    const member = await seedUser(world.db)
    await addMember(world.db, org.orgId, member.userId, "member")
    const readKey = await seedOrgKey(world.db, org.orgId, member, "read")
    for (const token of [org.owner.sessionToken, member.sessionToken, readKey.secret]) {
      const all = await call(world, "GET", path, { token })
      expect(all.status).toBe(200)
      expect(all.json.has_more).toBe(false)
      expect(all.json.items.map((i: any) => [i.index, i.outcome, i.input])).toEqual([
        [0, "passed", emailFindInput(1)],
        [1, "partial", emailFindInput(2, "mock-partial")],
        [2, "failed", emailFindInput(3, "mock-fail")]
      ])
    }
    const { json } = await call(world, "GET", path, { token: org.owner.sessionToken })
    // A charged item's result is the one its hash on the signed receipt covers; a failed item has none.
    const signed = (await call(world, "GET", `/v1/receipts/${id}`, { token: agent.key })).json.receipt
    expect(json.items[0].result).toMatchObject({ email: expect.any(String) })
    expect(json.items.map((i: any) => i.result_hash)).toEqual(signed.items.map((i: any) => i.result_hash))
    expect(json.items[2].result).toBeNull()
    expect(json).not.toHaveProperty("signature")

    const first = await call(world, "GET", `${path}?limit=2`, { token: readKey.secret })
    expect(first.json.items.map((i: any) => i.index)).toEqual([0, 1])
    expect(first.json.has_more).toBe(true)
    const second = await call(world, "GET", `${path}?limit=2&starting_after=1`, { token: readKey.secret })
    expect(second.json.items.map((i: any) => i.index)).toEqual([2])
    expect(second.json.has_more).toBe(false)
    for (const cursor of ["3", "-1", "nope"]) {
      const refused = await call(world, "GET", `${path}?starting_after=${cursor}`, { token: readKey.secret })
      expect(refused.status, cursor).toBe(404)
    }
    expect((await call(world, "GET", `${path}?limit=201`, { token: readKey.secret })).status).toBe(400)

    // Another org: its members see no such receipt, even under their own org's path.
    const stranger = await seedBuyer(world)
    const foreign = await call(world, "GET", `/v1/orgs/${stranger.org.orgId}/receipts/${id}/items`, {
      token: stranger.org.owner.sessionToken
    })
    expect(foreign.status).toBe(404)
    expect(foreign.json.error.code).toBe("not_found")
    expect((await call(world, "GET", path, { token: stranger.org.owner.sessionToken })).status).toBe(404)
    expect(
      (await call(world, "GET", `/v1/orgs/${org.orgId}/receipts/${randomUUID()}/items`, {
        token: org.owner.sessionToken
      })).status
    ).toBe(404)
    // Agent keys read the signed receipt only: an org path does not take them.
    expect((await call(world, "GET", path, { token: agent.key })).status).toBe(401)
    expect((await call(world, "GET", path)).status).toBe(401)
  })
})

describe("disputes", () => {
  it("opens a dispute on a charged item; an administrator upholds it and the charge is refunded", async () => {
    const { agent, org } = await seedBuyer(world)
    const receiptId = await buyMixed(agent.key)
    expect(await spentOf(agent.agentId)).toBe("80")
    const opened = await dispute(agent.key, {
      receipt_id: receiptId,
      item_index: 1,
      reason: "catch-all guess, bounced"
    })
    expect(opened.status).toBe(201)
    expect(opened.json.dispute).toMatchObject({
      receipt_id: receiptId,
      item_index: 1,
      status: "open",
      decision: null,
      reason: "catch-all guess, bounced",
      item_cost: { credits: "40" },
      refund: { credits: "0" }
    })
    const id = opened.json.dispute.id
    expect((await call(world, "GET", `/v1/disputes/${id}`, { token: agent.key })).json.dispute.status).toBe("open")
    const listed = await call(world, "GET", "/admin/disputes?status=open", { token: admin.token })
    expect(listed.json.disputes.map((d: any) => d.id)).toContain(id)

    const noReason = await decide(id, { decision: "upheld" })
    expect(noReason.status).toBe(400)
    expect(noReason.json.error).toMatchObject({ code: "reason_required", retryable: false })
    expect((await decide(id, { decision: "upheld", reason: "   " })).json.error.code).toBe("reason_required")

    const upheld = await decide(id, { decision: "upheld", reason: "Address bounced on delivery" })
    expect(upheld.status).toBe(200)
    expect(upheld.json.dispute).toMatchObject({
      status: "upheld",
      decision: "upheld",
      note: "Address bounced on delivery",
      refund: { credits: "40", usd: "0.040" }
    })
    expect(await spentOf(agent.agentId)).toBe("40")
    const receipt = await call(world, "GET", `/v1/receipts/${receiptId}`, { token: agent.key })
    expect(receipt.json.receipt.refunded.credits).toBe("40")
    expect(receipt.json.receipt.items[1].refund.credits).toBe("40")
    expect(await eventsOf(world.db, org.orgId, "dispute.decided")).toEqual([{
      dispute_id: id,
      receipt_id: receiptId,
      item_index: 1,
      decision: "upheld",
      refunded_credits: "40",
      note: "Address bounced on delivery"
    }])
    const twice = await decide(id, { decision: "rejected", reason: "changed my mind" })
    expect(twice.status).toBe(409)
    expect(twice.json.error.code).toBe("conflict")
  })

  it("members dispute from the org's side (session or write key); read keys and other orgs cannot", async () => {
    const { agent, org } = await seedBuyer(world)
    const receiptId = await buyMixed(agent.key)
    const member = await seedUser(world.db)
    await addMember(world.db, org.orgId, member.userId, "member")
    const path = `/v1/orgs/${org.orgId}/disputes`

    const opened = await call(world, "POST", path, {
      token: member.sessionToken,
      body: { receipt_id: receiptId, item_index: 0, reason: "wrong person" }
    })
    expect(opened.status).toBe(201)
    // The dispute is the buying agent's, whoever opened it.
    expect(opened.json.dispute).toMatchObject({ receipt_id: receiptId, item_index: 0, agent_id: agent.agentId })
    const readKey = (await seedOrgKey(world.db, org.orgId, org.owner, "read")).secret
    const writeKey = (await seedOrgKey(world.db, org.orgId, org.owner, "write")).secret
    const byReadKey = await call(world, "POST", path, {
      token: readKey,
      body: { receipt_id: receiptId, item_index: 1 }
    })
    expect(byReadKey.status).toBe(403)
    const byWriteKey = await call(world, "POST", path, {
      token: writeKey,
      body: { receipt_id: receiptId, item_index: 1 }
    })
    expect(byWriteKey.status).toBe(201)
    // The same rules as an agent's: not charged, already disputed.
    const failed = await call(world, "POST", path, {
      token: member.sessionToken,
      body: { receipt_id: receiptId, item_index: 2 }
    })
    expect(failed.json.error.code).toBe("not_disputable")
    const twice = await call(world, "POST", path, {
      token: member.sessionToken,
      body: { receipt_id: receiptId, item_index: 0 }
    })
    expect(twice.json.error.code).toBe("conflict")

    const listed = await call(world, "GET", path, { token: readKey })
    expect(listed.status).toBe(200)
    expect(listed.json.disputes.map((d: any) => d.item_index)).toEqual([0, 1])
    expect((await call(world, "GET", `${path}?status=upheld`, { token: readKey })).json.disputes).toEqual([])
    // Another org sees none of them and cannot dispute this org's receipt.
    const other = await seedBuyer(world)
    const otherPath = `/v1/orgs/${other.org.orgId}/disputes`
    expect((await call(world, "GET", otherPath, { token: other.org.owner.sessionToken })).json.disputes).toEqual([])
    const foreign = await call(world, "POST", otherPath, {
      token: other.org.owner.sessionToken,
      body: { receipt_id: receiptId, item_index: 0 }
    })
    expect(foreign.status).toBe(404)
    const cursorElsewhere = await call(world, "GET", `${otherPath}?starting_after=${opened.json.dispute.id}`, {
      token: other.org.owner.sessionToken
    })
    expect(cursorElsewhere.status).toBe(404)
  })

  it("a rejected dispute refunds nothing", async () => {
    const { agent, org } = await seedBuyer(world)
    const receiptId = await buyMixed(agent.key)
    const opened = await dispute(agent.key, { receipt_id: receiptId, item_index: 0 })
    const rejected = await decide(opened.json.dispute.id, {
      decision: "rejected",
      reason: "The address verified on probe"
    })
    expect(rejected.json.dispute).toMatchObject({ status: "rejected", refund: { credits: "0" } })
    expect(await spentOf(agent.agentId)).toBe("80")
    expect((await eventsOf(world.db, org.orgId, "dispute.decided"))[0]).toMatchObject({
      decision: "rejected",
      refunded_credits: "0"
    })
  })

  it("answers 409 not_disputable for an item that was not charged, and 409 conflict for a second dispute", async () => {
    const { agent } = await seedBuyer(world)
    const receiptId = await buyMixed(agent.key)
    const failed = await dispute(agent.key, { receipt_id: receiptId, item_index: 2 })
    expect(failed.status).toBe(409)
    expect(failed.json.error).toMatchObject({ code: "not_disputable", retryable: false })
    expect((await dispute(agent.key, { receipt_id: receiptId, item_index: 0 })).status).toBe(201)
    const again = await dispute(agent.key, { receipt_id: receiptId, item_index: 0 })
    expect(again.status).toBe(409)
    expect(again.json.error.code).toBe("conflict")
    expect((await dispute(agent.key, { receipt_id: receiptId, item_index: 3 })).status).toBe(404)
    expect((await dispute(agent.key, { receipt_id: randomUUID(), item_index: 0 })).status).toBe(404)
    const stranger = await seedBuyer(world)
    expect((await dispute(stranger.agent.key, { receipt_id: receiptId, item_index: 0 })).status).toBe(404)
  })

  it("a receipt_id that is not a UUID names no receipt (404); one that is not text is a bad body (400)", async () => {
    const { agent, org } = await seedBuyer(world)
    const notFound = {
      code: "not_found",
      message: "No receipt with that id in this org",
      retryable: false
    }
    const openers = [["/v1/disputes", agent.key], [`/v1/orgs/${org.orgId}/disputes`, org.owner.sessionToken]] as const
    for (const [path, token] of openers) {
      const malformed = await call(world, "POST", path, { token, body: { receipt_id: "r-1", item_index: 0 } })
      expect(malformed.status).toBe(404)
      expect(malformed.json.error).toMatchObject(notFound)
      const notText = await call(world, "POST", path, { token, body: { receipt_id: 7, item_index: 0 } })
      expect(notText.status).toBe(400)
      expect(notText.json.error.code).toBe("invalid_input")
    }
  })

  it("opens disputes within 7 days of the purchase and answers 409 dispute_window_closed after", async () => {
    const { agent } = await seedBuyer(world)
    const inside = await buyMixed(agent.key)
    const outside = await buyMixed(agent.key)
    await world.db.query(`UPDATE receipts SET created_at = created_at - interval '6 days 23 hours' WHERE id = $1`, [
      inside
    ])
    await world.db.query(`UPDATE receipts SET created_at = created_at - interval '7 days 1 minute' WHERE id = $1`, [
      outside
    ])
    expect((await dispute(agent.key, { receipt_id: inside, item_index: 0 })).status).toBe(201)
    const closed = await dispute(agent.key, { receipt_id: outside, item_index: 0 })
    expect(closed.status).toBe(409)
    expect(closed.json.error).toMatchObject({ code: "dispute_window_closed", retryable: false })
  })

  it("allows at most 100 open disputes per org (402 plan_limit)", async () => {
    const { agent, org } = await seedBuyer(world)
    const receiptId = await buyMixed(agent.key)
    for (let batch = 0; batch < 4; batch++) {
      const bought = await execute(agent.key, {
        tool: "jina-reader",
        inputs: Array.from({ length: 25 }, (_, i) => ({ url: `https://g${batch}.example.com/${i}` }))
      })
      const opened = await Promise.all(
        Array.from({ length: 25 }, (_, i) => dispute(agent.key, { receipt_id: bought.json.receipt_id, item_index: i }))
      )
      expect(opened.every((answer) => answer.status === 201)).toBe(true)
    }
    const limited = await dispute(agent.key, { receipt_id: receiptId, item_index: 0 })
    expect(limited.status).toBe(402)
    expect(limited.json.error).toMatchObject({ code: "plan_limit", retryable: false })
    // The code is the one for plan limits; the message says no plan lifts this one, and what does.
    expect(limited.json.error.message).toContain("whatever its plan")
    expect(limited.json.error.message).toContain("once one of them is decided")
    // Deciding one frees a place.
    const [anyOpen] = await world.db.query(`SELECT id FROM disputes WHERE org_id = $1 AND status = 'open' LIMIT 1`, [
      org.orgId
    ])
    await decide(anyOpen.id, { decision: "rejected", reason: "fine" })
    expect((await dispute(agent.key, { receipt_id: receiptId, item_index: 0 })).status).toBe(201)
    const [{ open }] = await world.db.query(
      `SELECT count(*)::int AS open FROM disputes WHERE org_id = $1 AND status = 'open'`,
      [org.orgId]
    )
    expect(open).toBe(100)
  })

  it("admin endpoints need an administrator's session", async () => {
    const { agent, org } = await seedBuyer(world)
    const receiptId = await buyMixed(agent.key)
    const opened = await dispute(agent.key, { receipt_id: receiptId, item_index: 0 })
    for (const token of [agent.key, org.owner.sessionToken]) {
      const refused = await decide(opened.json.dispute.id, { decision: "upheld", reason: "x" }, token)
      expect([401, 403]).toContain(refused.status)
    }
    expect((await call(world, "GET", "/admin/disputes")).status).toBe(401)
    expect((await decide(randomUUID(), { decision: "upheld", reason: "x" })).status).toBe(404)
  })
})
