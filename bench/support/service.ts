import { PgClient } from "@effect/sql-pg"
import { ConfigProvider, Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync } from "node:fs"
import * as http from "node:http"
import pg from "pg"
import { Ledger } from "../../src/Services/Ledger/Ledger.js"
import { LedgerStandaloneLive } from "../../src/Services/Ledger/LedgerStandalone.js"
import type { TestDatabase } from "../../test/support/database.js"
import { seedAgent, seedOrg } from "../../test/support/fixtures.js"
import { measurePostgresOf } from "./cpu.js"

/**
 * Starts the service as a child process (as `npm start` would) on a fresh database of the
 * local PostgreSQL, and stops it afterwards. Benchmarks measure it from outside.
 */
export const benchServerUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"

export const createBenchDatabase = async () => {
  const name = `bench_${randomBytes(4).toString("hex")}`
  const admin = new pg.Client({ connectionString: benchServerUrl })
  await admin.connect()
  measurePostgresOf(Number((await admin.query(`SELECT pg_backend_pid() AS pid`)).rows[0].pid))
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(benchServerUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: benchServerUrl })
      await client.connect()
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await client.end()
    }
  }
}

export interface RunningService {
  readonly url: string
  readonly process: ChildProcess
  readonly stop: () => Promise<void>
}

/**
 * What starts the service of a checkout as `npm start` does: its build, made now
 * (scripts/build-service.mjs), or `tsx src/main.ts` for a commit from before the build.
 */
const serviceArgs = (checkout: string) => {
  const builder = `${checkout}/scripts/build-service.mjs`
  if (!existsSync(builder)) return ["--import", "tsx", "src/main.ts"]
  execFileSync(process.execPath, [builder], { cwd: checkout, stdio: "ignore" })
  return ["--enable-source-maps", "dist/service.mjs"]
}

/**
 * Starts the service of this checkout (or of the checkout at `checkout`, for a benchmark
 * comparing two commits); resolves once it serves (and, with several processes, once all do).
 */
export const startService = (env: Record<string, string>, checkout?: string): Promise<RunningService> =>
  new Promise((resolve, reject) => {
    // BENCH_NODE_ARGS passes flags to the service's Node, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
    const nodeArgs = (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter((arg) => arg.length > 0)
    const args = serviceArgs(checkout ?? process.cwd())
    const child = spawn(process.execPath, [...nodeArgs, ...args], {
      ...(checkout === undefined ? {} : { cwd: checkout }),
      env: { ...process.env, PORT: "0", LOG_LEVEL: "Info", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /Service ready at (http:\/\/localhost:\d+)/.exec(output)
      const allWorkers = Number(env["WORKER_PROCESSES"] ?? 1) <= 1 || /All \d+ worker processes ready/.test(output)
      if (match && allWorkers) {
        child.stdout!.off("data", onData)
        resolve({
          url: match[1]!.replace("localhost", "127.0.0.1"),
          process: child,
          stop: () =>
            new Promise((done) => {
              child.once("exit", () => done())
              child.kill("SIGTERM")
            })
        })
      }
    }
    child.stdout!.on("data", onData)
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()))
    child.once("exit", (code) => reject(new Error(`service exited (${code}) before it was ready:\n${output}`)))
  })

/**
 * The benchmarks' own provider and one live endpoint of it (10 credits a call), written
 * into the catalogue; PROVIDERS_UPSTREAM points the service at the bench's provider.
 */
export const seedBenchEndpoint = async (
  pool: pg.Pool,
  endpoint: { readonly id: string; readonly name: string; readonly category: string; readonly path: string }
) => {
  await pool.query(
    `INSERT INTO providers (id, name, base_url, auth, cost_report, daily_call_cap, docs_url)
     VALUES ('benchprov', 'Bench provider', 'https://unused.invalid', '{"in":"header","name":"X-Api-Key","prefix":""}',
             NULL, 1000000, 'https://docs.invalid')
     ON CONFLICT (id) DO NOTHING`
  )
  await pool.query(
    `INSERT INTO catalogue_endpoints (id, provider_id, name, category, method, path, path_params, base_price_credits,
                                      availability)
     VALUES ($1, 'benchprov', $2, $3, 'GET', $4, '[]', 10, 'live')`,
    [endpoint.id, endpoint.name, endpoint.category, endpoint.path]
  )
}

/** What the gateway benchmarks' provider answers. */
export const benchPersonAnswer = { ok: true, person: { name: "Ada Lovelace", email: "ada@example.com" } }

/**
 * The gateway benchmarks' endpoint (`benchprov/person`, 10 credits a call) and live agents
 * (`orgs` x `agentsPerOrg`, funded); `call(i)` is the i-th `POST /v1/call` request, spread
 * over their keys so the per-key limit is never what is measured.
 */
export const seedGatewayCalls = async (pool: pg.Pool, databaseUrl: string, orgs: number, agentsPerOrg: number) => {
  await seedBenchEndpoint(pool, benchPersonEndpoint)
  const keys = await seedLiveAgentKeys(databaseUrl, orgs, agentsPerOrg)
  return { keys, call: gatewayCallsOf(keys) }
}

/** The gateway benchmarks' endpoint: `benchprov/person`, 10 credits a call. */
export const benchPersonEndpoint = { id: "benchprov/person", name: "Person", category: "people", path: "/v1/person" }

/** The i-th `POST /v1/call` of `benchprov/person`, round robin over `keys`. */
export const gatewayCallsOf = (keys: ReadonlyArray<string>) => (i: number) => ({
  method: "POST",
  headers: { authorization: `Bearer ${keys[i % keys.length]}`, "content-type": "application/json" },
  body: JSON.stringify({ endpoint: "benchprov/person", query: { email: `user${i}@example.com` } })
})

/** A pool of the service's database (at `url`) as the test fixtures take it. */
export const fixturesOf = (pool: pg.Pool, url = "") =>
  ({
    url,
    query: async (text: string, values?: ReadonlyArray<unknown>) =>
      (await pool.query(text, values as Array<unknown>)).rows
  }) as unknown as TestDatabase

/**
 * The purchase benchmarks' buyers: one org with `agents` test agents (no approval threshold,
 * a budget no run reaches); `purchase(i)` is the i-th single-input `POST /v1/execute` of
 * `jina-reader` (a mock tool answering at once), under its own idempotency key and spread
 * over the agents so the per-key limit is never what is measured.
 */
export const seedPurchases = async (pool: pg.Pool, agents: number) => {
  const fixtures = fixturesOf(pool)
  const org = await seedOrg(fixtures)
  const buyers = await Promise.all(
    Array.from(
      { length: agents },
      () => seedAgent(fixtures, org.orgId, { approvalThresholdCredits: null, monthlyBudgetCredits: 1_000_000_000n })
    )
  )
  const purchase = (i: number) => ({
    method: "POST",
    headers: { authorization: `Bearer ${buyers[i % agents]!.key}` },
    body: JSON.stringify({
      tool: "jina-reader",
      inputs: [{ url: `https://news.example.com/${i}` }],
      idempotency_key: `bench-${i}`
    })
  })
  return { buyers, purchase }
}

/** The benchmarks' stand-in provider on loopback: answers every request 200 with `answer`. */
export const startBenchProvider = async (answer: unknown) => {
  const body = JSON.stringify(answer)
  const server = http.createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
      res.end(body)
    })
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, close: () => server.close() }
}

/**
 * `orgs` orgs with `agentsPerOrg` live agents each, every org funded far beyond what a run
 * spends; answers the agents' keys. Writes straight into `databaseUrl` (the service's own
 * database, migrated by the service's start).
 */
export const seedLiveAgentKeys = async (databaseUrl: string, orgs: number, agentsPerOrg: number) => {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 })
  const database = fixturesOf(pool)
  const ledger = ManagedRuntime.make(
    LedgerStandaloneLive.pipe(
      Layer.provideMerge(PgClient.layer({ url: Redacted.make(databaseUrl), maxConnections: 2 })),
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map())))
    )
  )
  try {
    const keys: Array<string> = []
    for (let o = 0; o < orgs; o++) {
      const org = await seedOrg(database)
      await ledger.runPromise(Effect.flatMap(Ledger, (l) => l.credit(org.orgId, 100_000_000n, "top_up", "bench")))
      for (let a = 0; a < agentsPerOrg; a++) {
        keys.push((await seedAgent(database, org.orgId, { mode: "live", monthlyBudgetCredits: 100_000_000n })).key)
      }
    }
    return keys
  } finally {
    await ledger.dispose()
    await pool.end()
  }
}

/** A helper process of a benchmark (a baseline server) that prints `ready <port>` once it listens. */
export const startReadyChild = (args: Array<string>, env: Record<string, string>) =>
  new Promise<{ url: string; child: ChildProcess }>((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString()
      const match = /ready (\d+)/.exec(output)
      if (match) resolve({ url: `http://127.0.0.1:${match[1]}`, child })
    })
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()))
    child.once(
      "exit",
      (code) => reject(new Error(`${args.join(" ")} exited (${code}) before it was ready:\n${output}`))
    )
  })
