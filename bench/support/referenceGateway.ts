import { createHash, randomUUID } from "node:crypto"
import * as http from "node:http"
import pg from "pg"
import { endpointId, hold, holdParams, keyLookup, price, providerUrl, settle } from "./referenceStatements.js"

/**
 * The reference of `npm run bench -- gateway`: the least a gateway call must do, written
 * plainly (node:http and pg, prepared statements, no framework) on the service's own schema
 * and rows, so the service's cost can be read as a ratio of it:
 * 1. the agent key by its SHA-256 (active, live);
 * 2. one conditional hold: the agent's month row takes the price within the budget, the
 *    org's balance gives it, the hold row and its entry are written, in one statement;
 * 3. the provider call (PROVIDERS_UPSTREAM, provider id as the first path segment);
 * 4. one settlement: the hold captured, the month's held moved to spent, the capture entry.
 * Not done here, and done by the service: rate limits, quotas, the call log, refunds,
 * alerts, events, request ids, metrics and logs. Run as its own process; prints `ready <port>`.
 * `GET /statements` answers how many statements it has sent (the benchmark's statements per call).
 *
 * With REFERENCE_BATCHED=true its two money statements are group-committed as the service's
 * are: holds (and settlements) that arrive while a batch is being written wait and go in the
 * next one, in one transaction on one connection (the statements one after another, one
 * commit), two batches at a time; a lone call goes at once.
 * Settings: DATABASE_URL, PROVIDERS_UPSTREAM, REFERENCE_ENDPOINT (id), REFERENCE_PRICE (credits),
 * REFERENCE_BATCHED.
 */
const pool = new pg.Pool({ connectionString: process.env["DATABASE_URL"], max: 20 })
const batched = process.env["REFERENCE_BATCHED"] === "true"
let statements = 0

interface Waiting {
  readonly config: pg.QueryConfig
  readonly done: (result: pg.QueryResult | Error) => void
}

/** A hold's org and agent ($5, $2), or a settlement's hold ($1): the order a batch takes its locks in. */
const orderOf = (waiting: Waiting) => {
  const values = (waiting.config.values ?? []) as Array<string>
  return values.length > 2 ? `${values[4]}:${values[1]}` : `${values[0]}`
}

/** Group commit in plain code: a queue drained by two workers, one transaction per batch. */
const makeBatcher = () => {
  const queue: Array<Waiting> = []
  let idle = 2
  const drain = async () => {
    if (idle === 0 || queue.length === 0) return
    idle--
    // In one lock order (by the hold's org, then agent), so two batches never wait in a circle.
    const batch = queue.splice(0, 64).sort((a, b) => orderOf(a).localeCompare(orderOf(b)))
    const client = await pool.connect()
    try {
      await client.query("BEGIN")
      const results: Array<pg.QueryResult> = []
      for (const waiting of batch) results.push(await client.query(waiting.config))
      await client.query("COMMIT")
      statements += batch.length
      batch.forEach((waiting, i) => waiting.done(results[i]!))
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {})
      batch.forEach((waiting) => waiting.done(error as Error))
    } finally {
      client.release()
      idle++
      void drain()
    }
  }
  return (config: pg.QueryConfig) =>
    new Promise<pg.QueryResult>((resolve, reject) => {
      queue.push({ config, done: (result) => (result instanceof Error ? reject(result) : resolve(result)) })
      void drain()
    })
}
const holds = makeBatcher()
const settlements = makeBatcher()

const send = (config: pg.QueryConfig) => {
  statements++
  return pool.query(config)
}

const answer = (res: http.ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  res.end(text)
}

const handle = async (req: http.IncomingMessage, body: string, res: http.ServerResponse) => {
  const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? "")?.[1]
  if (token === undefined) return answer(res, 401, { error: { code: "unauthenticated" } })
  const agent = (await send({ ...keyLookup, values: [createHash("sha256").update(token).digest("hex")] }))
    .rows[0] as { id: string; org_id: string } | undefined
  if (agent === undefined) return answer(res, 401, { error: { code: "unauthenticated" } })
  const request = JSON.parse(body) as { endpoint: string; query?: Record<string, string> }
  if (request.endpoint !== endpointId) return answer(res, 404, { error: { code: "unknown_endpoint" } })
  const holdId = randomUUID()
  const held = await (batched ? holds : send)({ ...hold, values: holdParams(holdId, agent) })
  if (held.rowCount === 0) return answer(res, 402, { error: { code: "insufficient_credits" } })
  const provider = await fetch(providerUrl(request.query))
  const data = await provider.json()
  await (batched ? settlements : send)({ ...settle, values: [holdId, randomUUID()] })
  answer(res, 200, { call_id: holdId, endpoint: endpointId, status: "succeeded", charged: price, data })
}

const server = http.createServer((req, res) => {
  if (req.method === "GET" && req.url === "/statements") return answer(res, 200, { statements })
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", () => {
    handle(req, Buffer.concat(chunks).toString("utf8"), res).catch((error: unknown) =>
      answer(res, 500, { error: { code: "internal_error", message: String(error) } })
    )
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, "127.0.0.1", () => console.log(`ready ${(server.address() as { port: number }).port}`))
