import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { emailFindInput, eventsOf } from "../Purchasing/support.js"
import { addMember, seedAgent, seedOrg, seedOrgKey, seedUser } from "../support/fixtures.js"
import { call, startWorld, type World } from "../support/world.js"

let world: World
beforeAll(async () => {
  world = await startWorld("papprovals", { smtp: true })
})
afterAll(async () => {
  await world?.close()
})

const execute = (key: string, body: unknown) => call(world, "POST", "/v1/execute", { token: key, body })
const threeInputs = [emailFindInput(1), emailFindInput(2), emailFindInput(3)]
const linksIn = (text: string) => {
  const approve = /Approve: (\S+)/.exec(text)?.[1]
  const reject = /Reject:\s+(\S+)/.exec(text)?.[1]
  return { approve: approve!, reject: reject! }
}
/** A mailed link lands on the dashboard's page for it, which carries the link's token. */
const tokenOf = (link: string) => {
  const url = new URL(link)
  expect(url.pathname).toBe("/dashboard/approve")
  return url.searchParams.get("token")!
}
/** The page that serves the link without JavaScript. */
const pathOf = (link: string) => `/v1/approval-links/${tokenOf(link)}`

/** An org with two owners, a member, keys, and an agent whose threshold is 100 credits. */
const seedApprovalOrg = async (agentOptions: Parameters<typeof seedAgent>[2] = {}) => {
  const org = await seedOrg(world.db)
  const secondOwner = await seedUser(world.db)
  await addMember(world.db, org.orgId, secondOwner.userId, "owner")
  const member = await seedUser(world.db)
  await addMember(world.db, org.orgId, member.userId, "member")
  const agent = await seedAgent(world.db, org.orgId, {
    approvalThresholdCredits: 100n,
    monthlyBudgetCredits: 1_000_000n,
    ...agentOptions
  })
  return {
    org,
    secondOwner,
    member,
    agent,
    ownerWriteKey: await seedOrgKey(world.db, org.orgId, org.owner, "write"),
    ownerReadKey: await seedOrgKey(world.db, org.orgId, org.owner, "read"),
    memberWriteKey: await seedOrgKey(world.db, org.orgId, member, "write")
  }
}

describe("approvals", () => {
  it("round trip: 202 approval_required, event, a mail with one-click links to each owner, decide, retry", async () => {
    const o = await seedApprovalOrg()
    const body = { tool: "hunter-email-finder", inputs: threeInputs }
    const asked = await execute(o.agent.key, body)
    expect(asked.status).toBe(202)
    expect(asked.json.error).toMatchObject({ code: "approval_required", retryable: false })
    const approval = asked.json.approval
    expect(approval).toMatchObject({
      status: "waiting",
      reason: "over_threshold",
      item_count: 3,
      amount: { credits: "120", usd: "0.120" }
    })
    const tools = await call(world, "GET", "/v1/tools")
    expect(approval.tool_id).toBe(tools.json.tools.find((t: any) => t.slug === "hunter-email-finder").id)
    expect(Date.parse(approval.expires_at) - Date.now()).toBeGreaterThan(23.9 * 3600_000)
    // Nothing was held or bought.
    expect(await world.db.query(`SELECT 1 FROM receipts WHERE agent_id = $1`, [o.agent.agentId])).toHaveLength(0)
    expect(await world.db.query(`SELECT 1 FROM ledger_holds WHERE agent_id = $1`, [o.agent.agentId])).toHaveLength(0)

    expect(await eventsOf(world.db, o.org.orgId, "approval.requested")).toEqual([{
      approval_id: approval.id,
      agent_id: o.agent.agentId,
      tool_id: approval.tool_id,
      item_count: 3,
      amount_credits: "120",
      amount_usd: "0.120",
      reason: "over_threshold",
      expires_at: approval.expires_at
    }])

    const mailA = await world.smtp.waitFor(o.org.owner.email, (m) => m.text.includes(approval.id))
    const mailB = await world.smtp.waitFor(o.secondOwner.email, (m) => m.text.includes(approval.id))
    expect(mailA.subject).toContain("Approve a purchase of $0.12 by")
    expect(mailA.text).toContain("for up to 120 credits ($0.12).")
    expect(world.smtp.messages.some((m) => m.to.includes(o.member.email.toLowerCase()))).toBe(false)
    const linksA = linksIn(mailA.text)
    const linksB = linksIn(mailB.text)
    expect(linksA.approve).not.toBe(linksB.approve)

    // Asking again (no approval_id) while it waits names the same approval; no new mail or event.
    const again = await execute(o.agent.key, body)
    expect(again.status).toBe(202)
    expect(again.json.approval.id).toBe(approval.id)
    const waitingRetry = await execute(o.agent.key, { ...body, approval_id: approval.id })
    expect(waitingRetry.status).toBe(202)
    expect(await eventsOf(world.db, o.org.orgId, "approval.requested")).toHaveLength(1)

    const seen = await call(world, "GET", `/v1/approvals/${approval.id}`, { token: o.agent.key })
    expect(seen.json.approval).toMatchObject({ id: approval.id, status: "waiting", used: false, item_count: 3 })

    // Opening the link shows a page with one button and decides nothing.
    const page = await call(world, "GET", pathOf(linksA.approve))
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toContain("text/html")
    expect(page.headers.get("cache-control")).toBe("no-store")
    expect(page.text).toContain(`<form method="post" action="${pathOf(linksA.approve)}">`)
    expect((await call(world, "GET", `/v1/approvals/${approval.id}`, { token: o.agent.key })).json.approval.status)
      .toBe("waiting")
    // The click decides.
    const decided = await call(world, "POST", pathOf(linksA.approve))
    expect(decided.status).toBe(200)
    expect(decided.text).toContain("Purchase approved")
    expect(await eventsOf(world.db, o.org.orgId, "approval.decided")).toEqual([
      { approval_id: approval.id, agent_id: o.agent.agentId, status: "approved", note: null }
    ])
    const view = await call(world, "GET", `/v1/approvals/${approval.id}`, { token: o.agent.key })
    expect(view.json.approval).toMatchObject({
      status: "approved",
      decided_via: "email_link",
      decided_by_email: o.org.owner.email
    })
    // A link works once; the other owner's links find it decided.
    const reused = await call(world, "POST", pathOf(linksA.approve))
    expect(reused.status).toBe(401)
    expect(reused.json.error.code).toBe("invalid_token")
    const late = await call(world, "POST", pathOf(linksB.reject))
    expect(late.status).toBe(409)
    expect(late.json.error.code).toBe("conflict")

    // Retry with approval_id: same tool, inputs and amount proceeds.
    const bought = await execute(o.agent.key, { ...body, approval_id: approval.id })
    expect(bought.status).toBe(200)
    expect(bought.json.charged.credits).toBe("120")
    const receipt = await call(world, "GET", `/v1/receipts/${bought.json.receipt_id}`, { token: o.agent.key })
    expect(receipt.json.receipt.approval_id).toBe(approval.id)
    const used = await call(world, "GET", `/v1/approvals/${approval.id}`, { token: o.agent.key })
    expect(used.json.approval).toMatchObject({ used: true, receipt_id: bought.json.receipt_id })
    // One approval pays for one purchase.
    const twice = await execute(o.agent.key, { ...body, approval_id: approval.id })
    expect(twice.status).toBe(409)
    expect(twice.json.error.code).toBe("conflict")
  })

  it("the dashboard's page reads a mailed link and uses it once, as JSON", async () => {
    const o = await seedApprovalOrg()
    const asked = await execute(o.agent.key, { tool: "hunter-email-finder", inputs: threeInputs })
    const approval = asked.json.approval
    const mailA = await world.smtp.waitFor(o.org.owner.email, (m) => m.text.includes(approval.id))
    const mailB = await world.smtp.waitFor(o.secondOwner.email, (m) => m.text.includes(approval.id))
    const reject = tokenOf(linksIn(mailA.text).reject)

    // Reading decides nothing and needs no sign-in: the token is the credential.
    const preview = await call(world, "GET", `/v1/approval-links/${reject}/approval`)
    expect(preview.status).toBe(200)
    expect(preview.json).toMatchObject({ decision: "reject", approval: { id: approval.id, status: "waiting" } })
    const decided = await call(world, "POST", `/v1/approval-links/${reject}/decision`)
    expect(decided.status).toBe(200)
    expect(decided.json.approval).toMatchObject({
      id: approval.id,
      status: "rejected",
      decided_via: "email_link",
      decided_by_email: o.org.owner.email
    })
    // Used once: the same link is dead, the other owner's link finds it decided.
    expect((await call(world, "POST", `/v1/approval-links/${reject}/decision`)).json.error.code).toBe("invalid_token")
    const other = await call(world, "POST", `/v1/approval-links/${tokenOf(linksIn(mailB.text).approve)}/decision`)
    expect(other.status).toBe(409)
    expect(other.json.error.code).toBe("conflict")
    expect((await call(world, "GET", "/v1/approval-links/apl_nonsense/approval")).json.error.code).toBe("invalid_token")
  })

  it("deciding over HTTP: an empty body is 400 invalid_input, an owner's org key rejects, the retry is 403 approval_rejected, a second decision 409 conflict", async () => {
    const o = await seedApprovalOrg()
    const body = { tool: "hunter-email-finder", inputs: threeInputs }
    const approval = (await execute(o.agent.key, body)).json.approval
    // The decision body is JSON: an empty body is refused and decides nothing.
    const empty = await call(world, "POST", `/v1/orgs/${o.org.orgId}/approvals/${approval.id}/reject`, {
      token: o.org.owner.sessionToken
    })
    expect(empty.status).toBe(400)
    expect(empty.json.error.code).toBe("invalid_input")
    const rejected = await call(world, "POST", `/v1/orgs/${o.org.orgId}/approvals/${approval.id}/reject`, {
      token: o.ownerWriteKey.secret,
      body: { note: "too many" }
    })
    expect(rejected.status).toBe(200)
    expect(rejected.json.approval).toMatchObject({ id: approval.id, status: "rejected", decided_via: "org_key" })
    const retry = await execute(o.agent.key, { ...body, approval_id: approval.id })
    expect(retry.status).toBe(403)
    expect(retry.json.error).toMatchObject({ code: "approval_rejected", retryable: false })
    const twice = await call(world, "POST", `/v1/orgs/${o.org.orgId}/approvals/${approval.id}/approve`, {
      token: o.org.owner.sessionToken,
      body: {}
    })
    expect(twice.status).toBe(409)
    expect(twice.json.error.code).toBe("conflict")
  })

  it("only owners decide; members and read keys may list; other orgs see nothing", async () => {
    const o = await seedApprovalOrg()
    const approval = (await execute(o.agent.key, { tool: "hunter-email-finder", inputs: threeInputs })).json.approval
    const path = `/v1/orgs/${o.org.orgId}/approvals/${approval.id}/approve`
    for (const token of [o.member.sessionToken, o.memberWriteKey.secret, o.ownerReadKey.secret]) {
      const refused = await call(world, "POST", path, { token, body: {} })
      expect(refused.status).toBe(403)
      expect(refused.json.error.code).toBe("forbidden")
    }
    for (const token of [o.member.sessionToken, o.ownerReadKey.secret]) {
      const list = await call(world, "GET", `/v1/orgs/${o.org.orgId}/approvals?status=waiting`, { token })
      expect(list.status).toBe(200)
      expect(list.json.approvals.map((a: any) => a.id)).toEqual([approval.id])
    }
    const other = await seedOrg(world.db)
    const foreign = await call(world, "POST", `/v1/orgs/${other.orgId}/approvals/${approval.id}/approve`, {
      token: other.owner.sessionToken,
      body: {}
    })
    expect(foreign.status).toBe(404)
    const otherAgent = await seedAgent(world.db, other.orgId)
    expect((await call(world, "GET", `/v1/approvals/${approval.id}`, { token: otherAgent.key })).status).toBe(404)
    expect(
      (await execute(otherAgent.key, { tool: "hunter-email-finder", inputs: threeInputs, approval_id: approval.id }))
        .status
    ).toBe(404)
  })

  it("an expired approval answers 409 approval_expired over HTTP, and its mailed links are dead", async () => {
    const o = await seedApprovalOrg()
    const body = { tool: "hunter-email-finder", inputs: threeInputs }
    const waiting = (await execute(o.agent.key, body)).json.approval
    const mail = await world.smtp.waitFor(o.org.owner.email, (m) => m.text.includes(waiting.id))
    await world.db.query(
      `UPDATE purchase_approvals SET created_at = created_at - interval '25 hours', expires_at = expires_at - interval '25 hours'
       WHERE id = $1`,
      [waiting.id]
    )
    await world.db.query(
      `UPDATE approval_links SET expires_at = expires_at - interval '25 hours' WHERE approval_id = $1`,
      [waiting.id]
    )
    const decide = await call(world, "POST", `/v1/orgs/${o.org.orgId}/approvals/${waiting.id}/approve`, {
      token: o.org.owner.sessionToken,
      body: {}
    })
    expect(decide.status).toBe(409)
    expect(decide.json.error.code).toBe("approval_expired")
    const retry = await execute(o.agent.key, { ...body, approval_id: waiting.id })
    expect(retry.status).toBe(409)
    expect(retry.json.error).toMatchObject({ code: "approval_expired", retryable: false })
    expect((await call(world, "POST", pathOf(linksIn(mail.text).approve))).json.error.code).toBe("invalid_token")
  })

  it("lists approvals newest first with a cursor, and 404s an unknown approval", async () => {
    const o = await seedApprovalOrg()
    const ids: Array<string> = []
    for (let i = 0; i < 3; i++) {
      const asked = await execute(o.agent.key, {
        tool: "hunter-email-finder",
        inputs: [emailFindInput(10 + i), emailFindInput(20 + i), emailFindInput(30 + i)]
      })
      ids.push(asked.json.approval.id)
    }
    const page1 = await call(world, "GET", `/v1/orgs/${o.org.orgId}/approvals?limit=2`, {
      token: o.org.owner.sessionToken
    })
    expect(page1.json.approvals.map((a: any) => a.id)).toEqual([ids[2], ids[1]])
    expect(page1.json.has_more).toBe(true)
    const page2 = await call(world, "GET", `/v1/orgs/${o.org.orgId}/approvals?limit=2&starting_after=${ids[1]}`, {
      token: o.org.owner.sessionToken
    })
    expect(page2.json).toMatchObject({ has_more: false })
    expect(page2.json.approvals.map((a: any) => a.id)).toEqual([ids[0]])
    expect(
      (await call(world, "GET", `/v1/approvals/00000000-0000-4000-8000-000000000000`, { token: o.agent.key })).status
    )
      .toBe(404)
    expect((await call(world, "GET", `/v1/approvals/not-a-uuid`, { token: o.agent.key })).status).toBe(404)
  })
})
