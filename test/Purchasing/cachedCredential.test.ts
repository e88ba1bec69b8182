import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, startWorld, type World } from "../support/world.js"
import { emailFindInput, seedBuyer } from "./support.js"

/**
 * A purchase may take its agent key from the replica's cache; the statement that writes
 * the purchase checks it again, and nothing else is done for a cached key before that
 * check. Changes are written straight into the database, as another replica (or an
 * owner's dashboard on another replica) would make them: nothing tells this cache.
 */
let world: World
beforeAll(async () => {
  world = await startWorld("exec-cache")
})
afterAll(() => world?.close())

const execute = (key: string, body: unknown) => call(world, "POST", "/v1/execute", { token: key, body })
const purchase = (i: number, extra: Record<string, unknown> = {}) => ({
  tool: "hunter-email-finder",
  inputs: [emailFindInput(i)],
  ...extra
})

/** A test agent whose key is now in this replica's cache (a purchase it was refused). */
const cachedBuyer = async (
  options: { readonly approvalThresholdCredits?: bigint; readonly mode?: "test" | "live" } = {}
) => {
  const buyer = await seedBuyer(world, options)
  const refused = await execute(buyer.agent.key, { ...purchase(0), tool: "no-such-tool" })
  expect(refused.status).toBe(options.mode === "live" ? 501 : 404)
  return buyer
}

const written = async (agentId: string) =>
  (await world.db.query(
    `SELECT (SELECT count(*)::int FROM receipts WHERE agent_id = $1) AS receipts,
            (SELECT count(*)::int FROM ledger_holds WHERE agent_id = $1) AS holds,
            (SELECT count(*)::int FROM purchase_approvals WHERE agent_id = $1) AS approvals`,
    [agentId]
  ))[0]

describe("cached agent keys on POST /v1/execute", () => {
  it("refuses a key revoked elsewhere at once, writing nothing", async () => {
    const { agent } = await cachedBuyer()
    await world.db.query(`UPDATE agents SET key_hash = NULL WHERE id = $1`, [agent.agentId])
    const refused = await execute(agent.key, purchase(1))
    expect(refused.status).toBe(401)
    expect(refused.json.error.code).toBe("unauthenticated")
    expect(await written(agent.agentId)).toEqual({ receipts: 0, holds: 0, approvals: 0 })
  })

  it("answers a revoked key's purchase that would be refused with 401, not the refusal", async () => {
    const { agent } = await cachedBuyer()
    await world.db.query(`UPDATE agents SET key_hash = NULL WHERE id = $1`, [agent.agentId])
    expect((await execute(agent.key, { ...purchase(2), tool: "no-such-tool" })).status).toBe(401)
  })

  it("refuses a disabled agent's purchase under a used key instead of replaying it", async () => {
    const { agent } = await cachedBuyer()
    const body = purchase(3, { idempotency_key: "kept" })
    expect((await execute(agent.key, body)).status).toBe(200)
    await world.db.query(`UPDATE agents SET status = 'disabled' WHERE id = $1`, [agent.agentId])
    expect((await execute(agent.key, body)).status).toBe(401)
  })

  it("serves an agent enabled elsewhere at once: a refused key is never answered from the cache", async () => {
    const { agent } = await seedBuyer(world)
    await world.db.query(`UPDATE agents SET status = 'disabled' WHERE id = $1`, [agent.agentId])
    expect((await execute(agent.key, purchase(8))).status).toBe(401)
    await world.db.query(`UPDATE agents SET status = 'active' WHERE id = $1`, [agent.agentId])
    expect((await execute(agent.key, purchase(9))).status).toBe(200)
  })

  it("applies an approval threshold lowered elsewhere at once", async () => {
    const { agent } = await cachedBuyer()
    await world.db.query(`UPDATE agents SET approval_threshold_credits = 1 WHERE id = $1`, [agent.agentId])
    const asked = await execute(agent.key, purchase(4))
    expect(asked.status).toBe(202)
    expect(asked.json.error.code).toBe("approval_required")
    expect(await written(agent.agentId)).toMatchObject({ receipts: 0, approvals: 1 })
  })

  it("asks no approval the agent no longer needs: a threshold removed elsewhere applies at once", async () => {
    const { agent } = await cachedBuyer({ approvalThresholdCredits: 1n })
    await world.db.query(`UPDATE agents SET approval_threshold_credits = NULL WHERE id = $1`, [agent.agentId])
    expect((await execute(agent.key, purchase(5))).status).toBe(200)
    expect(await written(agent.agentId)).toMatchObject({ receipts: 1, approvals: 0 })
  })

  it("a live agent switched to test elsewhere buys as a test one at once", async () => {
    // Live purchases are not open here (501): a stale live credential must not answer that.
    const { agent } = await cachedBuyer({ mode: "live" })
    await world.db.query(`UPDATE agents SET mode = 'test' WHERE id = $1`, [agent.agentId])
    expect((await execute(agent.key, purchase(7))).status).toBe(200)
  })

  it("a test agent switched to live elsewhere is refused as a live one at once", async () => {
    const { agent } = await cachedBuyer()
    await world.db.query(`UPDATE agents SET mode = 'live' WHERE id = $1`, [agent.agentId])
    const refused = await execute(agent.key, purchase(6))
    expect(refused.status).toBe(501)
    expect(refused.json.error.code).toBe("live_execute_unavailable")
  })
})
