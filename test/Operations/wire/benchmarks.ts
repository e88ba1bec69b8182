import { randomUUID } from "node:crypto"
import { beforeAll, describe, expect, it } from "vitest"
import { seedBuyer } from "../../Purchasing/support.js"
import { seedAdmin } from "../../support/fixtures.js"
import { expectError } from "../../support/people.js"
import { call, eventually } from "../../support/world.js"
import { adminCall, auditOf } from "../support.js"
import { world } from "./world.js"

/** Measured benchmarks: runs over labelled sample sets as durable jobs, read at once by scores and recommend. */
let admin: { adminId: string; token: string }

export const benchmarksCases = () => {
  beforeAll(async () => {
    admin = await seedAdmin(world.db)
  })

  const finished = (runId: string) =>
    eventually(async () => {
      const run = (await adminCall(world, admin, "GET", `/admin/benchmark-runs/${runId}`)).json.run
      return run.status === "done" || run.status === "failed" ? run : undefined
    }, { what: `benchmark run ${runId}` })

  const scoresOf = async (taskType: string) =>
    (await call(world, "GET", `/v1/scores?task_type=${taskType}`)).json.scores as Array<any>

  describe("benchmark runs", () => {
    it("ships a labelled sample set for each of the seven task types", async () => {
      const sets = (await adminCall(world, admin, "GET", "/admin/sample-sets")).json.sample_sets
      expect(sets.map((s: any) => s.task_type).sort()).toEqual([
        "company_enrich",
        "email_find",
        "email_verify",
        "person_enrich",
        "phone_find",
        "web_extract",
        "web_search"
      ])
      for (const set of sets) expect(set.size).toBeGreaterThanOrEqual(20)
    })

    it("measures a tool, and /v1/scores, /v1/reports and recommend follow the new report at once", async () => {
      const before = await scoresOf("email_find")
      // The last of the ranking: the mock tools answer at once and cover every sample, so it climbs.
      const last = before.filter((s) => s.purchasable).sort((a, b) => b.rank - a.rank)[0]
      const started = await adminCall(world, admin, "POST", `/admin/tools/${last.slug}/benchmarks`, {})
      expect(started.status).toBe(202)
      expect(started.json.run).toMatchObject({
        tool_id: last.tool_id,
        sample_set: "email_find.2026-11",
        status: "queued",
        progress: { done: 0, total: 20 },
        results: null
      })
      const run = await finished(started.json.run.id)
      expect(run.status).toBe("done")
      expect(run.progress).toEqual({ done: 20, total: 20 })
      // The mock tools answer the first.last pattern; four of the twenty people use another.
      expect(run.results).toMatchObject({ sample_size: 20, coverage: 1, accuracy: 0.8 })
      expect(run.results.cost_credits).toBe(String(20 * Number(await priceOf(last.slug))))

      const report = (await call(world, "GET", "/v1/reports")).json.reports.find((r: any) =>
        r.tool_id === last.tool_id && r.measured_by_run === run.id
      )
      expect(report).toMatchObject({ sample_size: 20, accuracy: 0.8, coverage: 1, check_version: run.check_version })
      const after = await scoresOf("email_find")
      const measured = after.find((s) => s.tool_id === last.tool_id)
      expect(measured.parts).not.toEqual(last.parts)
      expect(measured.score).not.toBe(last.score)
      // Recommend ranks by the same new scores.
      const { agent } = await seedBuyer(world)
      const recommended = await call(world, "POST", "/v1/recommend", {
        token: agent.key,
        body: { task_type: "email_find" }
      })
      expect(recommended.json.tools.map((t: any) => t.slug)).toEqual(
        [...after].sort((a, b) => a.rank - b.rank).map((s) => s.slug)
      )
      expect(measured.rank).toBeLessThan(last.rank)
      expect((await auditOf(world.db, last.tool_id)).map((row: any) => row.action)).toContain("tool.benchmark")
    })

    it("refuses an unknown or foreign sample set and a second run while one is in flight", async () => {
      expectError(
        await adminCall(world, admin, "POST", "/admin/tools/hunter-email-finder/benchmarks", { sample_set: "nope" }),
        400,
        "invalid_input"
      )
      expectError(
        await adminCall(world, admin, "POST", "/admin/tools/hunter-email-finder/benchmarks", {
          sample_set: "web_search.2026-11"
        }),
        400,
        "invalid_input"
      )
      const toolId = (await scoresOf("email_verify"))[0].tool_id
      // A run another replica holds (its lease far ahead).
      await world.db.query(
        `INSERT INTO benchmark_runs (id, tool_id, sample_set, started_by, status, total, check_version, created_at,
                                   claimed_by, lease_until)
       VALUES ($1, $2, 'email_verify.2026-11', 'schedule', 'running', 20, '2.0.1', now(), 'elsewhere', now() + interval '1 hour')`,
        [randomUUID(), toolId]
      )
      expectError(await adminCall(world, admin, "POST", `/admin/tools/${toolId}/benchmarks`, {}), 409, "conflict")
      expectError(await adminCall(world, admin, "GET", "/admin/benchmark-runs/not-a-run"), 404, "not_found")
    })

    it("takes over a run whose worker crashed and finishes it from where it stood", async () => {
      const toolId = (await scoresOf("company_enrich"))[0].tool_id
      const runId = randomUUID()
      // Ten samples done (eight answered, all right) before the worker's lease lapsed.
      await world.db.query(
        `INSERT INTO benchmark_runs (id, tool_id, sample_set, started_by, status, total, done, answered, correct,
                                   latencies_ms, cost_credits, check_version, created_at, started_at, claimed_by,
                                   lease_until)
       VALUES ($1, $2, 'company_enrich.2026-11', 'schedule', 'running', 20, 10, 10, 10, '{5,5,5,5,5,5,5,5,5,5}',
               0, '1.0.2', now(), now(), 'crashed-worker', now() - interval '1 second')`,
        [runId, toolId]
      )
      const run = await finished(runId)
      expect(run.status).toBe("done")
      expect(run.progress).toEqual({ done: 20, total: 20 })
      // Samples 11-20 hold two of the four names the mock gets wrong: 18 of 20 right.
      expect(run.results).toMatchObject({ sample_size: 20, coverage: 1, accuracy: 0.9 })
      const [{ count }] = await world.db.query(
        `SELECT count(*)::int AS count FROM tool_benchmarks WHERE run_id = $1`,
        [runId]
      )
      expect(count).toBe(1)
    })
  })

  const priceOf = async (slug: string) =>
    (await call(world, "GET", "/v1/tools")).json.tools.find((t: any) => t.slug === slug).price_per_success.credits
}
