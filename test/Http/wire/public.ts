import { Validator } from "@seriousme/openapi-schema-validator"
import Ajv from "ajv"
import addFormats from "ajv-formats"
import { describe, expect, it } from "vitest"
import { errorCodes } from "../../../src/Errors/ErrorCatalogue.js"
import { request } from "../../support/server.js"
import { world } from "./world.js"

const get = (path: string) => request(`${world.server.url}${path}`)

export const publicCases = () => {
  describe("public data", () => {
    it("lists exactly the seven task types", async () => {
      const { json, status } = await get("/v1/task-types")
      expect(status).toBe(200)
      expect(json.task_types.map((t: any) => t.id)).toEqual([
        "email_find",
        "email_verify",
        "phone_find",
        "person_enrich",
        "company_enrich",
        "web_search",
        "web_extract"
      ])
    })

    it("lists tools with 3 to 6 per task type, each with its check and latest benchmark", async () => {
      const { json } = await get("/v1/tools")
      const byType = new Map<string, number>()
      for (const tool of json.tools) {
        byType.set(tool.task_type, (byType.get(tool.task_type) ?? 0) + 1)
        expect(tool.check.id).toMatch(/^[a-z_]+\.[a-z_]+$/)
        expect(tool.check.version).toMatch(/^\d+\.\d+\.\d+$/)
        expect(tool.latest_benchmark.sample_size).toBeGreaterThan(0)
        expect(tool.purchasable).toBe(
          tool.status === "live" && tool.price_per_success !== null
        )
        if (tool.price_per_success) {
          expect(tool.price_per_success.usd).toBe((Number(tool.price_per_success.credits) / 1000).toFixed(3))
        }
      }
      expect(byType.size).toBe(7)
      for (const count of byType.values()) {
        expect(count).toBeGreaterThanOrEqual(3)
        expect(count).toBeLessThanOrEqual(6)
      }
    })

    it("publishes scores that anyone can recompute from /v1/tools with /v1/formula", async () => {
      const [{ json: tools }, { json: scores }, { json: formula }] = await Promise.all([
        get("/v1/tools"),
        get("/v1/scores"),
        get("/v1/formula")
      ])
      expect(formula.weights).toEqual({ accuracy: 45, coverage: 25, latency: 15, price: 15 })
      // An independent implementation of the published text.
      const roundHalfUp = (n: bigint, d: bigint) => (2n * n + d) / (2n * d)
      const recompute = (tool: any) => {
        const b = tool.latest_benchmark
        const accuracy = Number(roundHalfUp(BigInt(Math.round(b.accuracy * 1e6)), 100n))
        const coverage = Number(roundHalfUp(BigInt(Math.round(b.coverage * 1e6)), 100n))
        const latency = Number(roundHalfUp(10000n * 2000n, BigInt(2000 + b.latency_p50_ms)))
        const price = tool.price_per_success === null
          ? 0
          : Number(roundHalfUp(10000n * 100n, 100n + BigInt(tool.price_per_success.credits)))
        const weighted = 45 * accuracy + 25 * coverage + 15 * latency + 15 * price
        return {
          parts: { accuracy, coverage, latency, price },
          score: Number(roundHalfUp(BigInt(weighted), 1000n)) / 10
        }
      }
      expect(scores.scores.length).toBe(tools.tools.length)
      for (const entry of scores.scores) {
        const tool = tools.tools.find((t: any) => t.id === entry.tool_id)
        const expected = recompute(tool)
        expect(entry.parts).toEqual(expected.parts)
        expect(entry.score).toBe(expected.score)
      }
      // Ranks run 1..n inside each task type, by score descending.
      for (const type of new Set<string>(scores.scores.map((s: any) => s.task_type))) {
        const ranked = scores.scores.filter((s: any) => s.task_type === type).sort((a: any, b: any) => a.rank - b.rank)
        expect(ranked.map((s: any) => s.rank)).toEqual(ranked.map((_: any, i: number) => i + 1))
        for (let i = 1; i < ranked.length; i++) expect(ranked[i - 1].score).toBeGreaterThanOrEqual(ranked[i].score)
      }
      const filtered = await get("/v1/scores?task_type=web_search")
      expect(new Set(filtered.json.scores.map((s: any) => s.task_type))).toEqual(new Set(["web_search"]))
      expect((await get("/v1/scores?task_type=nope")).json.error.code).toBe("invalid_input")
    })

    it("publishes pricing with the spec's plan quotas, multipliers, limits and the founding offer", async () => {
      const { json } = await get("/v1/pricing")
      const plans = Object.fromEntries(json.plans.map((p: any) => [p.name, p]))
      expect(Object.keys(plans)).toEqual(["Pay as you go", "Pro", "Max"])
      expect(plans["Pay as you go"].daily_score_lookups).toBe(1000)
      expect(plans["Pay as you go"].daily_free_text_lookups).toBe(100)
      expect(plans["Pro"].daily_score_lookups).toBe(10000)
      expect(plans["Pro"].daily_free_text_lookups).toBe(500)
      expect(plans["Max"].daily_score_lookups).toBeNull()
      expect(plans["Max"].daily_free_text_lookups).toBeNull()
      expect(plans["Pay as you go"].gateway_price_multiplier).toBe("1.00")
      for (const plan of json.plans) {
        expect(plan.max_active_agents).toBeGreaterThan(0)
        expect(plan.max_seats).toBeGreaterThan(0)
      }
      expect(json.founding_offer.status).toBe("open")
      expect(json.founding_offer.remaining).toBe(json.founding_offer.total - json.founding_offer.taken)
      expect(json.trial.credits.credits).toMatch(/^\d+$/)
      expect(json.trial.hourly_spend_limit).toEqual({ credits: "50", usd: "0.050" })
      expect(json.limits.webhook_endpoints_per_org).toBe(10)
    })

    it("publishes benchmark reports per tool with date, sample size, accuracy, coverage, latency and check version", async () => {
      const { json } = await get("/v1/reports")
      expect(json.reports.length).toBeGreaterThan(32)
      const first = json.reports[0]
      expect(Object.keys(first).sort()).toEqual(
        [
          "accuracy",
          "check_version",
          "cost_credits",
          "coverage",
          "date",
          "latency_p50_ms",
          "latency_p95_ms",
          "measured_by_run",
          "sample_size",
          "task_type",
          "tool_id",
          "tool_name",
          "tool_slug"
        ]
      )
      const dates = json.reports.map((r: any) => r.date)
      expect([...dates].sort().reverse()).toEqual(dates)
      // Shipped reports carry the tool's check version and no run.
      const hunter = json.reports.find((r: any) => r.tool_slug === "hunter-email-finder")
      expect(hunter).toMatchObject({ check_version: "1.2.0", measured_by_run: null, cost_credits: null })
    })

    it("reports service and database health and the catalogue counts", async () => {
      const { json } = await get("/v1/status")
      expect(json.status).toBe("ok")
      expect(json.database.status).toBe("ok")
      expect(json.version).toMatch(/^\d+\.\d+\.\d+$/)
      expect(json.catalogue).toEqual({ providers: 70, endpoints: 947, live: 840, on_request: 107, categories: 12 })
      expect(json.tools.task_types).toBe(7)
    })

    it("accepts a waitlist address once, a repeat without a duplicate row, and refuses a bad address", async () => {
      const join = (email: string) => request(`${world.server.url}/v1/waitlist`, { method: "POST", body: { email } })
      expect((await join("ada@example.com")).status).toBe(202)
      const repeat = await join(" Ada@Example.com ")
      expect(repeat.status).toBe(202)
      expect(repeat.json).toEqual({ status: "on_waitlist" })
      const rows = await world.db.query("SELECT email FROM waitlist")
      expect(rows).toHaveLength(1)
      const bad = await join("not-an-address")
      expect(bad.status).toBe(400)
      expect(bad.json.error.code).toBe("invalid_input")
      expect(bad.json.error.message).toContain("email")
    })

    it("publishes a JSON Schema for webhook events that accepts valid samples and refuses bad ones", async () => {
      const { json: schema } = await get("/schemas/webhook-event.json")
      const ajv = new Ajv.default({ strict: false })
      addFormats.default(ajv)
      const validate = ajv.compile(schema)
      const base = { id: "6f1c2a9e-1b2c-4d3e-8f40-1a2b3c4d5e6f", created_at: "2026-11-21T10:00:00.000Z" }
      const samples = [
        { type: "balance.low", data: { balance_credits: "4200", balance_usd: "4.200" } },
        {
          type: "budget.80pct",
          data: { agent_id: "a", agent_name: "n", spent_credits: "40000", budget_credits: "50000" }
        },
        {
          type: "approval.requested",
          data: {
            approval_id: "x",
            agent_id: "a",
            tool_id: "t",
            item_count: 3,
            amount_credits: "120",
            amount_usd: "0.120",
            reason: "over_threshold",
            expires_at: "2026-11-22T10:00:00.000Z"
          }
        },
        { type: "approval.decided", data: { approval_id: "x", agent_id: "a", status: "approved", note: null } },
        {
          type: "job.completed",
          data: { job_id: "j", status: "done", receipt_id: "r", item_count: 30, passed: 28, expired: 0 }
        },
        { type: "tool.paused", data: { tool_id: "t", tool_name: "T", reason: "accuracy drop" } },
        {
          type: "dispute.decided",
          data: {
            dispute_id: "d",
            receipt_id: "r",
            item_index: 0,
            decision: "upheld",
            refunded_credits: "40",
            note: "ok"
          }
        },
        {
          type: "price.changed",
          data: {
            tool_id: "t",
            tool_name: "T",
            old_credits: "40",
            new_credits: "45",
            valid_from: "2026-12-01T00:00:00.000Z"
          }
        },
        { type: "trial.expiring", data: { credits: "5000", expires_on: "2026-12-21" } },
        { type: "webhook.test", data: { message: "hello" } }
      ]
      for (const sample of samples) {
        expect(validate({ ...base, ...sample }), JSON.stringify(validate.errors)).toBe(true)
      }
      expect(validate({ ...base, type: "balance.low", data: { balance_credits: 42, balance_usd: "4.200" } })).toBe(
        false
      )
      expect(validate({ ...base, type: "job.completed", data: { job_id: "j" } })).toBe(false)
      expect(validate({ ...base, type: "unknown.type", data: {} })).toBe(false)
    })
  })

  describe("documentation", () => {
    it("serves an OpenAPI 3.1 document that a standard validator accepts, with the real error body", async () => {
      const { json, status } = await get("/openapi.json")
      expect(status).toBe(200)
      expect(json.openapi).toMatch(/^3\.1/)
      const validator = new Validator()
      const result = await validator.validate(json)
      expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([])
      expect(result.valid).toBe(true)
      const notFound = JSON.stringify(json.components.schemas["Error_not_found"])
      expect(notFound).toContain("doc_url")
      expect(notFound).toContain("retryable")
      const tools400 = json.paths["/v1/tools"].get.responses["400"]
      expect(JSON.stringify(tools400)).toContain("Error_invalid_input")
    })

    it("serves an interactive docs page and the error code page listing every code", async () => {
      const docs = await get("/docs")
      expect(docs.status).toBe(200)
      expect(docs.headers.get("content-type")).toContain("text/html")
      const errors = await get("/docs/errors")
      expect(errors.status).toBe(200)
      for (const code of errorCodes) expect(errors.text).toContain(`id="${code}"`)
    })
  })

  describe("OpenAPI error shapes", () => {
    it("documents decoding failures as the invalid_input body, not the platform's own", async () => {
      const { text } = await get("/openapi.json")
      expect(text).not.toContain("HttpApiDecodeError")
    })
  })
}
