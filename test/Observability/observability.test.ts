import { Effect } from "effect"
import { createServer, type IncomingMessage, type Server } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Lifecycle } from "../../src/Services/Lifecycle/Lifecycle.js"
import { killChildService, startChildService } from "../support/childService.js"
import { createTestDatabase } from "../support/database.js"
import { eventually } from "../support/eventually.js"
import { bearer, seedAgent, seedOrg, seedUser } from "../support/fixtures.js"
import { request } from "../support/server.js"
import { startWorld, topUp, type World } from "../support/world.js"

const REQUEST_ID = /^req_[0-9a-f]{32}$/
const METRICS_TOKEN = "metrics-token-for-tests"

describe("request ids and metrics", () => {
  let world: World
  beforeAll(async () => {
    world = await startWorld("observability", { env: { METRICS_TOKEN } })
  })
  afterAll(() => world?.close())

  it("puts a fresh request id on every answer, errors included", async () => {
    const answers = await Promise.all([
      request(`${world.server.url}/v1/task-types`),
      request(`${world.server.url}/v1/task-types`),
      request(`${world.server.url}/no/such/path`),
      request(`${world.server.url}/v1/me`),
      request(`${world.server.url}/healthz`)
    ])
    const ids = answers.map((answer) => answer.headers.get("request-id"))
    for (const id of ids) expect(id).toMatch(REQUEST_ID)
    expect(new Set(ids).size).toBe(ids.length)
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 404, 401, 200])
  })

  const scrape = async () => {
    const answer = await request(`${world.server.url}/metrics`, { headers: bearer(METRICS_TOKEN) })
    expect(answer.status).toBe(200)
    expect(answer.headers.get("content-type")).toContain("text/plain; version=0.0.4")
    return parsePrometheus(answer.text)
  }

  it("serves Prometheus metrics behind the token: requests by route and status, latency, backlogs", async () => {
    expect((await request(`${world.server.url}/metrics`)).status).toBe(401)
    expect((await request(`${world.server.url}/metrics`, { headers: bearer("wrong") })).json.error.code).toBe(
      "unauthenticated"
    )
    const before = await scrape()
    const org = await seedOrg(world.db)
    for (let i = 0; i < 3; i++) await request(`${world.server.url}/v1/task-types`)
    await request(`${world.server.url}/v1/orgs/${org.orgId}/agents`, { headers: bearer(org.owner.sessionToken) })
    await request(`${world.server.url}/v1/orgs/${org.orgId}/agents`)
    await request(`${world.server.url}/nothing/here/${crypto.randomUUID()}`)
    const after = await scrape()

    const delta = (name: string, labels: Record<string, string>) =>
      (after.value(name, labels) ?? 0) - (before.value(name, labels) ?? 0)
    expect(delta("http_requests_total", { method: "GET", route: "/v1/task-types", status: "200" })).toBe(3)
    // Route templates, never raw paths: the org id does not become a label.
    expect(delta("http_requests_total", { method: "GET", route: "/v1/orgs/:orgId/agents", status: "200" })).toBe(1)
    expect(delta("http_requests_total", { method: "GET", route: "/v1/orgs/:orgId/agents", status: "401" })).toBe(1)
    expect(delta("http_requests_total", { method: "GET", route: "unmatched", status: "404" })).toBe(1)
    expect(after.text).not.toContain(org.orgId)
    // Statements sent to PostgreSQL: the members' list and its session, at the least.
    expect(delta("db_statements_total", {})).toBeGreaterThanOrEqual(2)

    const count = delta("http_request_duration_seconds_count", { method: "GET", route: "/v1/task-types" })
    expect(count).toBe(3)
    const buckets = after.samples
      .filter((s) => s.name === "http_request_duration_seconds_bucket" && s.labels.route === "/v1/task-types")
      .map((s) => s.value)
    expect(buckets.length).toBeGreaterThan(5)
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]).toBeGreaterThanOrEqual(buckets[i - 1]!)
    expect(after.value("http_request_duration_seconds_bucket", { method: "GET", route: "/v1/task-types", le: "+Inf" }))
      .toBe(after.value("http_request_duration_seconds_count", { method: "GET", route: "/v1/task-types" }))

    for (
      const name of [
        "ledger_holds_open",
        "webhook_deliveries_pending",
        "mail_outbox_pending",
        "requests_running",
        "requests_queued"
      ]
    ) {
      expect(after.value(name, {}), name).toBeGreaterThanOrEqual(0)
    }
    expect(after.value("purchase_jobs", { state: "queued" })).toBeGreaterThanOrEqual(0)
    expect(after.value("rate_limit_store", { store: "memory" })).toBe(1)
    expect(after.value("rate_limit_store", { store: "redis" })).toBe(0)
    expect(after.value("draining", {})).toBe(0)
    // One HELP and TYPE per family.
    expect(after.text.match(/^# TYPE http_requests_total counter$/gm)).toHaveLength(1)
  })

  it("counts an open hold and a queued mail in the backlogs", async () => {
    const before = await scrape()
    const org = await seedOrg(world.db)
    const agent = await seedAgent(world.db, org.orgId, { mode: "live" })
    await world.db.query(
      `INSERT INTO ledger_holds (id, org_id, agent_id, amount, purpose, reference, test_mode, month, status, created_at, expires_at)
       VALUES (gen_random_uuid(), $1, $2, 5, 'gateway_call', gen_random_uuid()::text, false, date_trunc('month', now())::date,
               'held', now(), now() + interval '1 hour')`,
      [org.orgId, agent.agentId]
    )
    const after = await scrape()
    expect(after.value("ledger_holds_open", {})! - before.value("ledger_holds_open", {})!).toBe(1)
  })
})

describe("metrics switched off", () => {
  it("answers 404 when METRICS_TOKEN is unset", async () => {
    const world = await startWorld("observability_off")
    try {
      const answer = await request(`${world.server.url}/metrics`)
      expect(answer.status).toBe(404)
      expect(answer.json.error.message).toContain("METRICS_TOKEN")
    } finally {
      await world.close()
    }
  })
})

describe("readiness", () => {
  it("is ready only with every migration applied", async () => {
    const world = await startWorld("readiness")
    try {
      expect((await request(`${world.server.url}/readyz`)).status).toBe(200)
      // A database whose schema is behind this version (a restore, a rollback) is not ready.
      await world.db.query(
        `DELETE FROM effect_sql_migrations WHERE migration_id = (SELECT max(migration_id) FROM effect_sql_migrations)`
      )
      const behind = await request(`${world.server.url}/readyz`)
      expect(behind.status).toBe(503)
      expect(behind.json.error.message).toContain("Migrations not applied")
    } finally {
      await world.close()
    }
  })

  it("answers 503 from the moment the replica starts draining", async () => {
    const world = await startWorld("draining")
    try {
      expect((await request(`${world.server.url}/readyz`)).status).toBe(200)
      expect((await request(`${world.server.url}/healthz`)).status).toBe(200)
      await world.server.run(Effect.flatMap(Lifecycle, (lifecycle) => lifecycle.markDraining))
      const ready = await request(`${world.server.url}/readyz`)
      expect(ready.status).toBe(503)
      expect(ready.json.error.code).toBe("service_unavailable")
      // Still alive: the process serves, it just takes nothing new.
      expect((await request(`${world.server.url}/healthz`)).status).toBe(200)
    } finally {
      await world.close()
    }
  })
})

describe("logs", () => {
  it(
    "writes JSON lines with the request id on every line of a request and one access line, never a secret",
    async () => {
      const db = await createTestDatabase("observability_logs")
      const child = await startChildService({ DATABASE_URL: db.url, LOG_FORMAT: "json", LOG_LEVEL: "Info" })
      try {
        const user = await seedUser(db, { phoneVerified: false })
        const answer = await request(`${child.url}/v1/me/phone`, {
          method: "POST",
          headers: bearer(user.sessionToken),
          body: { phone: "+14155550123" }
        })
        expect(answer.status).toBeLessThan(300)
        const requestId = answer.headers.get("request-id")!
        expect(requestId).toMatch(REQUEST_ID)
        const lines: Array<any> = await eventually(() => {
          const parsed = child.output().split("\n").filter((line) => line.startsWith("{")).map((line) =>
            JSON.parse(line)
          )
          return parsed.some((line) => line.message === "request" && line.annotations?.request_id === requestId) &&
            parsed
        }, { timeoutMs: 5_000, intervalMs: 100, what: "the request's access line" })
        const ofRequest = lines.filter((line) => line.annotations?.request_id === requestId)
        // The SMS stand-in's line, written inside the request, carries its id too.
        expect(ofRequest.some((line) => String(line.message).includes("Development SMS sink"))).toBe(true)
        const access = ofRequest.find((line) => line.message === "request")
        expect(access).toMatchObject({
          logLevel: "INFO",
          annotations: { method: "POST", route: "/v1/me/phone", status: answer.status, credential: "session" }
        })
        expect(typeof access.annotations.duration_ms).toBe("number")
        // Each line once, as JSON: no second, human-readable copy of it.
        const mentions = child.output().split("\n").filter((line) => line.includes(requestId))
        expect(mentions.length).toBeGreaterThan(0)
        expect(mentions.filter((line) => !line.startsWith("{"))).toEqual([])
        expect(child.output()).not.toContain(user.sessionToken)
      } finally {
        await killChildService(child)
        await db.drop()
      }
    },
    60_000
  )

  it("writes one key=value line per log line by default, the access line included", async () => {
    const db = await createTestDatabase("observability_text_logs")
    const child = await startChildService({ DATABASE_URL: db.url, LOG_LEVEL: "Info" })
    try {
      const answer = await request(`${child.url}/v1/task-types`)
      const requestId = answer.headers.get("request-id")!
      const mentions = await eventually(() => {
        const found = child.output().split("\n").filter((line) => line.includes(requestId))
        return found.length > 0 && found
      }, { timeoutMs: 5_000, intervalMs: 100, what: "the request's line" })
      expect(mentions).toHaveLength(1)
      expect(mentions[0]).toMatch(/^timestamp=\S+ level=INFO fiber=#\d+ message=request /)
      expect(mentions[0]).toContain(`request_id=${requestId}`)
      expect(mentions[0]).toContain("route=/v1/task-types")
      expect(mentions[0]).toContain("status=200")
    } finally {
      await killChildService(child)
      await db.drop()
    }
  }, 60_000)
})

describe("OpenTelemetry", () => {
  let world: World
  let receiver: Server
  const received: Array<{ path: string; body: any }> = []
  beforeAll(async () => {
    receiver = createServer((req: IncomingMessage, res) => {
      let body = ""
      req.on("data", (chunk) => (body += chunk))
      req.on("end", () => {
        received.push({ path: req.url ?? "", body: JSON.parse(body || "{}") })
        res.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
    const port = (receiver.address() as { port: number }).port
    world = await startWorld("otlp", {
      provider: true,
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
        OTEL_SERVICE_NAME: "gateway-under-test",
        OTEL_BSP_SCHEDULE_DELAY: "100",
        OTEL_METRIC_EXPORT_INTERVAL: "200"
      }
    })
  })
  afterAll(async () => {
    await world?.close()
    await new Promise((resolve) => receiver.close(resolve))
  })

  const spans = () =>
    received.filter((r) => r.path === "/v1/traces").flatMap((r) =>
      r.body.resourceSpans.flatMap((resource: any) =>
        resource.scopeSpans.flatMap((scope: any) =>
          scope.spans.map((span: any) => ({
            ...span,
            service: resource.resource.attributes.find((a: any) => a.key === "service.name")?.value.stringValue,
            attrs: Object.fromEntries(span.attributes.map((a: any) => [a.key, Object.values(a.value)[0]]))
          }))
        )
      )
    )

  it("exports a trace of a gateway call over OTLP: the request, its provider call and its statements", async () => {
    const org = await seedOrg(world.db)
    await topUp(world, org.orgId, 1_000n)
    const agent = await seedAgent(world.db, org.orgId, { mode: "live" })
    const call = await request(`${world.server.url}/v1/call`, {
      method: "POST",
      headers: bearer(agent.key),
      body: { endpoint: "fakeprov/ok" }
    })
    expect(call.json.status).toBe("succeeded")
    const requestId = call.headers.get("request-id")
    const server: any = await eventually(() => spans().find((span) => span.attrs["request.id"] === requestId), {
      timeoutMs: 10_000,
      intervalMs: 100,
      what: "the request's server span"
    })
    expect(server).toMatchObject({ service: "gateway-under-test", attrs: { "http.route": "/v1/call" } })
    expect(server.attrs["http.response.status_code"]).toBe(200)
    const trace: Array<any> = await eventually(() => {
      const ofTrace = spans().filter((span) => span.traceId === server.traceId)
      return ofTrace.some((span) => span.name === "gateway.provider_call") && ofTrace
    }, { timeoutMs: 5_000, intervalMs: 100, what: "the provider call's span" })
    expect(trace.find((span) => span.name === "gateway.provider_call")?.attrs["gateway.endpoint"]).toBe("fakeprov/ok")
    expect(trace.filter((span) => span.name === "sql.execute").length).toBeGreaterThan(0)
    // The agent key never travels in a span.
    expect(JSON.stringify(received)).not.toContain(agent.key)
  }, 30_000)

  it("exports the request metrics too", async () => {
    const names: Array<string> = await eventually(() => {
      const exported: Array<string> = received.filter((r) => r.path === "/v1/metrics").flatMap((r) =>
        r.body.resourceMetrics.flatMap((m: any) =>
          m.scopeMetrics.flatMap((s: any) => s.metrics.map((x: any) => x.name))
        )
      )
      return exported.includes("http_requests_total") && exported
    }, { timeoutMs: 5_000, intervalMs: 100, what: "the request metrics exported" })
    expect(names).toContain("http_requests_total")
    expect(names).toContain("http_request_duration_seconds")
  }, 30_000)
})

/** A small reader of the Prometheus text format, enough to check values by name and labels. */
const parsePrometheus = (text: string) => {
  const samples: Array<{ name: string; labels: Record<string, string>; value: number }> = []
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (match === null) throw new Error(`Not a Prometheus sample: ${line}`)
    const labels: Record<string, string> = {}
    for (const pair of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]!] = pair[2]!
    }
    samples.push({ name: match[1]!, labels, value: match[3] === "+Inf" ? Infinity : Number(match[3]) })
  }
  const value = (name: string, labels: Record<string, string>) =>
    samples.find((s) =>
      s.name === name && Object.keys(labels).length === Object.keys(s.labels).length &&
      Object.entries(labels).every(([k, v]) => s.labels[k] === v)
    )?.value
  return { samples, value, text }
}
