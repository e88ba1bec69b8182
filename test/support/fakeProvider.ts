import * as http from "node:http"
import type { TestDatabase } from "./database.js"

/**
 * A fake data provider on loopback, reached through PROVIDERS_UPSTREAM
 * (`<upstream>/<provider id>/<path>`). What it does is chosen by the path's second part:
 * `/v1/ok`, `/v1/fail` (500), `/v1/refuse` (404), `/v1/hang` (never answers), `/v1/empty`
 * (204), `/v1/cost` (reports $0.004 in `x-cost-usd`), `/v1/bodycost` (reports 3 credits
 * in the body at `meta.cost`), `/v1/echo` and `/v1/items/<id>` (echo the request),
 * `/v1/slow` (answers after 100 ms), `/v1/late` (after 1.5 s), `/v1/trickle` (answers 200 at
 * once, then a byte of its body every 200 ms, never ending), `/v1/drop` (closes the connection
 * without an answer). It records every request it gets;
 * `setDown(provider)` makes one provider answer 503 to everything.
 */
export interface SeenRequest {
  readonly method: string
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

export interface FakeProvider {
  readonly url: string
  readonly seen: Array<SeenRequest>
  /** Makes every request to one provider answer 503 (its connection is down), or not. */
  readonly setDown: (providerId: string, down: boolean) => void
  readonly close: () => Promise<void>
}

export const startFakeProvider = async (): Promise<FakeProvider> => {
  const seen: Array<SeenRequest> = []
  const hanging = new Set<http.ServerResponse>()
  const down = new Set<string>()
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8")
      const request = { method: req.method ?? "GET", url: req.url ?? "/", headers: req.headers, body }
      seen.push(request)
      const path = new URL(request.url, "http://x").pathname
      const behaviour = path.split("/")[3] ?? ""
      if (down.has(path.split("/")[1] ?? "")) {
        res.writeHead(503, { "content-type": "application/json" })
        return res.end(JSON.stringify({ error: "provider down" }))
      }
      const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
        const text = JSON.stringify(value)
        res.writeHead(status, {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(text),
          ...headers
        })
        res.end(text)
      }
      switch (behaviour) {
        case "ok":
          return json(200, { ok: true, answer: 42 })
        case "fail":
          return json(500, { error: "upstream exploded" })
        case "refuse":
          return json(404, { error: "no such person" })
        case "hang":
          hanging.add(res)
          res.on("close", () => hanging.delete(res))
          return
        case "trickle": {
          hanging.add(res)
          res.writeHead(200, { "content-type": "application/json" })
          const drip = setInterval(() => res.write(" "), 200)
          res.on("close", () => {
            clearInterval(drip)
            hanging.delete(res)
          })
          return res.write("{")
        }
        case "drop":
          return req.socket.destroy()
        case "empty":
          res.writeHead(204)
          return res.end()
        case "cost":
          return json(200, { ok: true }, { "x-cost-usd": "0.004" })
        case "bodycost":
          return json(200, { ok: true, meta: { cost: 3 } })
        case "slow":
          return void setTimeout(() => json(200, { ok: true, slow: true }), 100)
        case "late":
          return void setTimeout(() => json(200, { ok: true, late: true }), 1500)
        case "echo":
        case "items":
          return json(200, {
            method: request.method,
            url: request.url,
            body: body.length > 0 ? JSON.parse(body) : null
          })
        default:
          return json(404, { error: `unknown behaviour ${behaviour}` })
      }
    })
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    setDown: (providerId, isDown) => {
      if (isDown) down.add(providerId)
      else down.delete(providerId)
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy()
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** Providers and endpoints of the fake, written straight into the suite's catalogue. */
export const seedTestCatalogue = async (db: TestDatabase) => {
  const providers = [
    {
      id: "fakeprov",
      auth: { in: "header", name: "X-Api-Key", prefix: "Key " },
      cost_report: { in: "header", name: "x-cost-usd", unit: "usd" },
      cap: 100_000
    },
    {
      id: "fakebody",
      auth: { in: "query", name: "api_key" },
      cost_report: { in: "body", path: "meta.cost", unit: "credits" },
      cap: 100_000
    },
    { id: "capped", auth: { in: "header", name: "Authorization", prefix: "Bearer " }, cost_report: null, cap: 3 }
  ]
  for (const p of providers) {
    await db.query(
      `INSERT INTO providers (id, name, base_url, auth, cost_report, daily_call_cap, docs_url)
       VALUES ($1, $2, 'https://unused.invalid', $3, $4, $5, 'https://docs.invalid') ON CONFLICT (id) DO NOTHING`,
      [p.id, p.id, JSON.stringify(p.auth), p.cost_report === null ? null : JSON.stringify(p.cost_report), p.cap]
    )
  }
  const endpoints: Array<[string, string, string, string, Array<string>, number, string, string | null, string]> = [
    ["fakeprov/ok", "fakeprov", "GET", "/v1/ok", [], 10, "live", null, "utilities"],
    ["fakeprov/fail", "fakeprov", "GET", "/v1/fail", [], 10, "live", null, "utilities"],
    ["fakeprov/refuse", "fakeprov", "GET", "/v1/refuse", [], 10, "live", null, "utilities"],
    ["fakeprov/hang", "fakeprov", "GET", "/v1/hang", [], 10, "live", null, "utilities"],
    ["fakeprov/trickle", "fakeprov", "GET", "/v1/trickle", [], 10, "live", null, "utilities"],
    ["fakeprov/drop", "fakeprov", "GET", "/v1/drop", [], 10, "live", null, "utilities"],
    ["fakeprov/empty", "fakeprov", "GET", "/v1/empty", [], 10, "live", null, "utilities"],
    ["fakeprov/cost", "fakeprov", "GET", "/v1/cost", [], 10, "live", null, "utilities"],
    ["fakeprov/slow", "fakeprov", "GET", "/v1/slow", [], 10, "live", null, "utilities"],
    ["fakeprov/late", "fakeprov", "GET", "/v1/late", [], 10, "live", null, "utilities"],
    ["fakeprov/echo", "fakeprov", "POST", "/v1/echo", [], 10, "live", null, "utilities"],
    [
      "fakeprov/item",
      "fakeprov",
      "GET",
      "/v1/items/{item_id}/{part}",
      ["item_id", "part"],
      10,
      "live",
      null,
      "utilities"
    ],
    ["fakeprov/people", "fakeprov", "GET", "/v1/ok", [], 10, "live", "domain", "people"],
    ["fakeprov/dear", "fakeprov", "GET", "/v1/ok", [], 1000, "live", null, "utilities"],
    ["fakeprov/inbox", "fakeprov", "POST", "/v1/ok", [], 10, "on request", null, "messaging"],
    ["fakebody/lookup", "fakebody", "GET", "/v1/bodycost", [], 10, "live", null, "companies"],
    ["capped/ok", "capped", "GET", "/v1/ok", [], 10, "live", null, "utilities"]
  ]
  for (const [id, provider, method, path, params, price, availability, people, category] of endpoints) {
    await db.query(
      `INSERT INTO catalogue_endpoints (id, provider_id, name, category, method, path, path_params, base_price_credits,
                                        availability, people_lookup_field)
       VALUES ($1, $2, $1, $9, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING`,
      [id, provider, method, path, JSON.stringify(params), price, availability, people, category]
    )
  }
}
