import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ChildService, killChildService, startChildService } from "../support/childService.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { eventually } from "../support/eventually.js"
import { bearer, seedAgent, seedOrg } from "../support/fixtures.js"
import { request } from "../support/server.js"
import { emailFindInput } from "./support.js"

/**
 * A crash in the middle of `POST /v1/execute`: the key's lock is a lease of the process
 * that runs the purchase, so after the process dies a retry under the same key is
 * answered within the lease (not minutes later), finishes the interrupted receipt, keeps
 * its answer under the key and replays it; no second receipt, no item run twice.
 */
let db: TestDatabase
let child: ChildService | undefined

const env = () => ({
  DATABASE_URL: db.url,
  // Each try of a mock tool takes 30 s: the purchase is surely running when the process dies.
  MOCK_TOOL_LATENCY_MS: "30000",
  IDEMPOTENCY_LEASE_MS: "1500"
})

beforeAll(async () => {
  db = await createTestDatabase("idem_crash")
})

afterAll(async () => {
  if (child !== undefined) await killChildService(child)
  await db?.drop()
})

const poll = <A>(check: () => Promise<A | undefined>, what: string, timeoutMs = 60_000): Promise<A> =>
  eventually(check, { what, timeoutMs })

describe("idempotency after a crash", () => {
  it("a retry after SIGKILL finishes and replays the same receipt, never a second one", async () => {
    child = await startChildService(env())
    const org = await seedOrg(db)
    const agent = await seedAgent(db, org.orgId, { approvalThresholdCredits: null, monthlyBudgetCredits: 10_000_000n })
    const body = { tool: "hunter-email-finder", inputs: [emailFindInput(1)], idempotency_key: "crash-1" }
    const execute = (url: string) => request(`${url}/v1/execute`, { method: "POST", headers: bearer(agent.key), body })

    void execute(child.url).catch(() => "connection lost")
    await poll(async () => {
      const rows = await db.query(`SELECT id FROM receipt_items WHERE status = 'running'`)
      return rows.length > 0 ? true : undefined
    }, "the purchase started")
    await killChildService(child)

    child = await startChildService(env())
    // Answered once the dead process's lease lapsed; until then `request_in_progress`.
    const answer = await poll(
      async () => {
        const attempt = await execute(child!.url)
        if (attempt.status === 409 && attempt.json.error.code === "request_in_progress") return undefined
        return attempt
      },
      "the key was answered",
      30_000
    )
    expect(answer.status).toBe(502)
    expect(answer.json.error).toMatchObject({ code: "provider_error", retryable: true })
    expect(answer.json.error.message).toContain("interrupted")

    // The answer stays: the same bytes again, and still one receipt with its item interrupted.
    const again = await execute(child.url)
    expect(again.status).toBe(answer.status)
    expect(again.text).toBe(answer.text)
    const receipts = await db.query(`SELECT id, status FROM receipts WHERE agent_id = $1`, [agent.agentId])
    expect(receipts).toEqual([{ id: expect.any(String), status: "done" }])
    const items = await db.query(`SELECT status, error_code, runs FROM receipt_items WHERE receipt_id = $1`, [
      receipts[0]!.id
    ])
    expect(items).toEqual([{ status: "failed", error_code: "interrupted", runs: 1 }])
    const [held] = await db.query(`SELECT count(*)::int AS n FROM ledger_holds WHERE org_id = $1 AND status = 'held'`, [
      org.orgId
    ])
    expect(held!.n).toBe(0)
  }, 180_000)

  it("a key left by a cut-off purchase whose receipt was never written is taken over by the retry", async () => {
    if (child !== undefined) await killChildService(child)
    // Mock tools at their own speed here.
    child = await startChildService({ DATABASE_URL: db.url })
    const org = await seedOrg(db)
    const agent = await seedAgent(db, org.orgId, { mode: "test", monthlyBudgetCredits: 10_000_000n })
    // What a crash between a key's statement and its purchase's left: in progress, lease lapsed,
    // naming a receipt that does not exist.
    await db.query(
      `INSERT INTO idempotency_keys (agent_id, key, fingerprint, status, answer, receipt_id, created_at, expires_at,
                                     lease_until)
       VALUES ($1, 'stuck-1', 'not this request', 'in_progress', NULL, gen_random_uuid(), now() - interval '1 hour',
               now() + interval '23 hours', now() - interval '50 minutes')`,
      [agent.agentId]
    )
    const body = { tool: "hunter-email-finder", inputs: [emailFindInput(2)], idempotency_key: "stuck-1" }
    const execute = () => request(`${child!.url}/v1/execute`, { method: "POST", headers: bearer(agent.key), body })
    const first = await execute()
    expect(first.status).toBe(200)
    const again = await execute()
    expect(again.text).toBe(first.text)
    const receipts = await db.query(`SELECT count(*)::int AS n FROM receipts WHERE agent_id = $1`, [agent.agentId])
    expect(receipts[0]!.n).toBe(1)
  }, 120_000)
})
