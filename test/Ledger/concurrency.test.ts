import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bearer, seedAgent, seedOrg } from "../support/fixtures.js"
import { invariants } from "../support/ledgerChecks.js"
import { request } from "../support/server.js"
import { startWorld, topUp, type World } from "../support/world.js"

/**
 * 500 concurrent gateway calls on real PostgreSQL against an org whose credits fit exactly
 * N = 100 calls, from two agents whose budgets fit M = 60 calls each (M < N < 2M, so both
 * the balance and each budget bind), with succeeding, failing, refusing and hanging
 * providers and repeated identical requests.
 */
let world: World

const PRICE = 10n
const N = 100n
const M = 60n

beforeAll(async () => {
  world = await startWorld("concurrency", { provider: true })
})

afterAll(() => world?.close())

describe("concurrent gateway calls", () => {
  it("never overspends the balance or a budget, and charges nothing for failures", async () => {
    const org = await seedOrg(world.db)
    await topUp(world, org.orgId, N * PRICE)
    const agents = [
      await seedAgent(world.db, org.orgId, { mode: "live", monthlyBudgetCredits: M * PRICE }),
      await seedAgent(world.db, org.orgId, { mode: "live", monthlyBudgetCredits: M * PRICE })
    ]
    const mix = ["fakeprov/ok", "fakeprov/ok", "fakeprov/slow", "fakeprov/fail", "fakeprov/refuse", "fakeprov/hang"]
    const bodies = Array.from({ length: 250 }, (_, i) => ({ endpoint: mix[i % mix.length]!, query: { n: i } }))
    // Every request is sent twice at once (the repeats), from both agents: 500 calls.
    const sends = bodies.flatMap((body, i) => {
      const agent = agents[i % 2]!
      const send = () => request(`${world.server.url}/v1/call`, { method: "POST", headers: bearer(agent.key), body })
      return [{ agent, endpoint: body.endpoint, send }, { agent, endpoint: body.endpoint, send }]
    })
    const answers = await Promise.all(sends.map(async (s) => ({ ...s, answer: await s.send() })))

    const byStatus = new Map<string, number>()
    for (const { answer } of answers) {
      const key = answer.status === 200 ? answer.json.status : answer.json.error.code
      byStatus.set(key, (byStatus.get(key) ?? 0) + 1)
    }
    // Only the expected answers, and some of each kind of refusal and failure happened.
    expect(
      [...byStatus.keys()].every((k) =>
        ["succeeded", "failed", "refused", "timed_out", "insufficient_credits", "over_budget"].includes(k)
      )
    ).toBe(true)
    expect(byStatus.get("failed")).toBeGreaterThan(0)
    expect(byStatus.get("timed_out")).toBeGreaterThan(0)
    expect((byStatus.get("insufficient_credits") ?? 0) + (byStatus.get("over_budget") ?? 0)).toBeGreaterThan(0)

    const succeeded = answers.filter((a) => a.answer.status === 200 && a.answer.json.status === "succeeded")
    expect(BigInt(succeeded.length)).toBeLessThanOrEqual(N)
    for (const agent of agents) {
      expect(BigInt(succeeded.filter((a) => a.agent === agent).length)).toBeLessThanOrEqual(M)
    }
    // Every success charged the price; every failure, refusal and timeout nothing, with a refund.
    for (const { answer } of answers) {
      if (answer.status !== 200) continue
      if (answer.json.status === "succeeded") {
        expect(answer.json.charged.credits).toBe(PRICE.toString())
        expect(["fakeprov/ok", "fakeprov/slow"]).toContain(answer.json.endpoint)
      } else {
        expect(answer.json.charged.credits).toBe("0")
        expect(answer.json.refunded.credits).toBe(PRICE.toString())
      }
    }

    const inv = await invariants(world.db, org.orgId)
    expect(inv.entriesSum).toBe(inv.balance)
    expect(inv.balance).toBe(N * PRICE - BigInt(succeeded.length) * PRICE)
    expect(inv.balance >= 0n).toBe(true)
    expect(inv.openHolds).toBe(0)
    expect(inv.negativeBudgets).toBe(0)
    expect(inv.mismatchedHolds).toBe(0)
    const spend = await world.db.query(
      `SELECT agent_id, spent, held FROM agent_month_spend WHERE org_id = $1`,
      [org.orgId]
    )
    for (const agent of agents) {
      const row = spend.find((r: any) => r.agent_id === agent.agentId)
      const mine = BigInt(succeeded.filter((a) => a.agent === agent).length)
      expect(BigInt(row.spent)).toBe(mine * PRICE)
      expect(BigInt(row.held)).toBe(0n)
      expect(BigInt(row.spent) <= M * PRICE).toBe(true)
    }
    const charged = await world.db.query(
      `SELECT status, SUM(charged_credits)::bigint AS charged, count(*)::int AS n FROM gateway_calls
       WHERE org_id = $1 GROUP BY status`,
      [org.orgId]
    )
    for (const row of charged) {
      if (row.status !== "succeeded") expect(row.charged).toBe("0")
      else expect(row.n).toBe(succeeded.length)
    }
    // The hold-side view agrees: captured credits are exactly the successes.
    const captured = await world.db.query(
      `SELECT COALESCE(SUM(captured), 0) AS captured FROM ledger_holds WHERE org_id = $1`,
      [org.orgId]
    )
    expect(BigInt(captured[0].captured)).toBe(BigInt(succeeded.length) * PRICE)
  })
})
