import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, startWorld, type World } from "../support/world.js"
import { seedBuyer } from "./support.js"

let world: World
beforeAll(async () => {
  world = await startWorld("precommend", { smtp: true })
})
afterAll(async () => {
  await world?.close()
})

const today = () => new Date().toISOString().slice(0, 10)
const yesterday = () => new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)

describe("POST /v1/recommend", () => {
  it("ranks the tools of a task type by the published formula, each with purchasable and its score parts", async () => {
    const { agent } = await seedBuyer(world)
    const answer = await call(world, "POST", "/v1/recommend", {
      token: agent.key,
      body: { task_type: "company_enrich" }
    })
    expect(answer.status).toBe(200)
    const scores = await call(world, "GET", "/v1/scores?task_type=company_enrich")
    expect(answer.json.task_type).toBe("company_enrich")
    expect(answer.json.task_match).toBeNull()
    expect(answer.json.formula_version).toBe(scores.json.formula_version)
    expect(answer.json.tools.map((t: any) => [t.slug, t.rank, t.score, t.parts, t.purchasable])).toEqual(
      scores.json.scores.map((s: any) => [s.slug, s.rank, s.score, s.parts, s.purchasable])
    )
    const clearbit = answer.json.tools.find((t: any) => t.slug === "clearbit-company-enrichment")
    expect(clearbit).toMatchObject({ purchasable: false, status: "information_only", price_per_success: null })
    expect(answer.json.tools.find((t: any) => t.slug === "hunter-company-enrichment")).toMatchObject({
      purchasable: true,
      price_per_success: { credits: "25", usd: "0.025" },
      check: { id: "company_enrich.domain_match", version: "1.0.2" }
    })
    expect(answer.json.lookups_today).toMatchObject({
      score_lookups: { used: 1, limit: 1000 },
      free_text_lookups: { used: 0, limit: 100 }
    })
    expect(answer.json.lookups_today.resets_at).toMatch(/T00:00:00\.000Z$/)
  })

  it("maps free text to a task type and says which words led to it", async () => {
    const { agent } = await seedBuyer(world)
    const answer = await call(world, "POST", "/v1/recommend", {
      token: agent.key,
      body: { task: "Verify that these email addresses are deliverable" }
    })
    expect(answer.status).toBe(200)
    expect(answer.json.task_type).toBe("email_verify")
    expect(answer.json.task_match).toEqual({
      method: "keywords",
      matched_words: ["verify", "email", "deliverable"],
      score: 7
    })
    expect(answer.json.lookups_today.score_lookups.used).toBe(1)
    expect(answer.json.lookups_today.free_text_lookups.used).toBe(1)
  })

  it("answers 400 unknown_task_type for a task type outside the seven, or text that maps to none", async () => {
    const { agent } = await seedBuyer(world)
    const unknown = await call(world, "POST", "/v1/recommend", { token: agent.key, body: { task_type: "dog_walking" } })
    expect(unknown.status).toBe(400)
    expect(unknown.json.error).toMatchObject({ code: "unknown_task_type", retryable: false })
    expect(unknown.json.error.doc_url).toMatch(/\/docs\/errors#unknown_task_type$/)
    const text = await call(world, "POST", "/v1/recommend", { token: agent.key, body: { task: "walk my dog twice" } })
    expect(text.status).toBe(400)
    expect(text.json.error.code).toBe("unknown_task_type")
    const both = await call(world, "POST", "/v1/recommend", {
      token: agent.key,
      body: { task_type: "web_search", task: "search" }
    })
    expect(both.status).toBe(400)
    expect(both.json.error.code).toBe("invalid_input")
    const neither = await call(world, "POST", "/v1/recommend", { token: agent.key, body: {} })
    expect(neither.json.error.code).toBe("invalid_input")
    // Refused calls count nothing.
    const ok = await call(world, "POST", "/v1/recommend", { token: agent.key, body: { task_type: "web_search" } })
    expect(ok.json.lookups_today.score_lookups.used).toBe(1)
  })

  it("needs an agent key", async () => {
    const { org } = await seedBuyer(world)
    expect((await call(world, "POST", "/v1/recommend", { body: { task_type: "web_search" } })).status).toBe(401)
    const session = await call(world, "POST", "/v1/recommend", {
      token: org.owner.sessionToken,
      body: { task_type: "web_search" }
    })
    expect(session.status).toBe(401)
  })

  it("answers 429 plan_limit once the plan's daily score lookups are used, and counts per UTC day", async () => {
    const { agent, org } = await seedBuyer(world)
    // Yesterday's use does not count today.
    await world.db.query(
      `INSERT INTO recommend_usage (org_id, day, score_lookups, free_text_lookups) VALUES ($1, $2, 1000, 100)`,
      [org.orgId, yesterday()]
    )
    await world.db.query(
      `INSERT INTO recommend_usage (org_id, day, score_lookups, free_text_lookups) VALUES ($1, $2, 999, 0)`,
      [org.orgId, today()]
    )
    const ask = () => call(world, "POST", "/v1/recommend", { token: agent.key, body: { task_type: "web_search" } })
    const [a, b] = await Promise.all([ask(), ask()])
    expect([a.status, b.status].sort()).toEqual([200, 429])
    const over = a.status === 429 ? a : b
    expect(over.json.error).toMatchObject({ code: "plan_limit", retryable: false })
    expect(over.json.error.message).toMatch(/resets at .*T00:00:00\.000Z/)
    expect(over.json.error.doc_url).toMatch(/#plan_limit$/)
    const [usage] = await world.db.query(`SELECT score_lookups FROM recommend_usage WHERE org_id = $1 AND day = $2`, [
      org.orgId,
      today()
    ])
    expect(usage.score_lookups).toBe(1000)
  })

  it("counts free-text lookups separately: 100 a day on Pay as you go, while task_type still works", async () => {
    const { agent, org } = await seedBuyer(world)
    await world.db.query(
      `INSERT INTO recommend_usage (org_id, day, score_lookups, free_text_lookups) VALUES ($1, $2, 100, 100)`,
      [org.orgId, today()]
    )
    const text = await call(world, "POST", "/v1/recommend", { token: agent.key, body: { task: "search the web" } })
    expect(text.status).toBe(429)
    expect(text.json.error.code).toBe("plan_limit")
    expect(text.json.error.message).toMatch(/free-text lookups \(100\)/)
    const typed = await call(world, "POST", "/v1/recommend", { token: agent.key, body: { task_type: "web_search" } })
    expect(typed.status).toBe(200)
    expect(typed.json.lookups_today.score_lookups.used).toBe(101)
  })

  it("uses each plan's quotas: Pro 10,000 and 500, Max no fixed limit", async () => {
    const pro = await seedBuyer(world, { plan: "pro" })
    await world.db.query(
      `INSERT INTO recommend_usage (org_id, day, score_lookups, free_text_lookups) VALUES ($1, $2, 9999, 499)`,
      [pro.org.orgId, today()]
    )
    const first = await call(world, "POST", "/v1/recommend", { token: pro.agent.key, body: { task: "find email" } })
    expect(first.json.lookups_today).toMatchObject({
      score_lookups: { used: 10000, limit: 10000 },
      free_text_lookups: { used: 500, limit: 500 }
    })
    expect(
      (await call(world, "POST", "/v1/recommend", { token: pro.agent.key, body: { task_type: "web_search" } })).status
    )
      .toBe(429)
    const max = await seedBuyer(world, { plan: "max" })
    await world.db.query(
      `INSERT INTO recommend_usage (org_id, day, score_lookups, free_text_lookups) VALUES ($1, $2, 5000000, 5000000)`,
      [max.org.orgId, today()]
    )
    const unlimited = await call(world, "POST", "/v1/recommend", { token: max.agent.key, body: { task: "find email" } })
    expect(unlimited.status).toBe(200)
    expect(unlimited.json.lookups_today.score_lookups).toEqual({ used: 5000001, limit: null })
  })
})
