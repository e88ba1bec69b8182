import { readFileSync } from "node:fs"
import * as http from "node:http"
import { loadavg } from "node:os"
import pg from "pg"
import { type LoadResult, runLoad } from "./support/load.js"
import {
  createBenchDatabase,
  type RunningService,
  seedBenchEndpoint,
  seedLiveAgentKeys,
  startBenchProvider,
  startService
} from "./support/service.js"

/**
 * What observability costs on the hot path: closed-loop live gateway calls against three
 * copies of the service on one database, side by side in rounds (A B C, A B C, ...):
 * - `bare`: ACCESS_LOG=false, no OTLP endpoint (tracing switched off);
 * - `default`: the access log on (written to a pipe), tracing off, as shipped;
 * - `otlp`: the access log on and traces, metrics and logs exported over OTLP to a
 *   loopback receiver that discards them.
 * Reported per configuration: median calls/s and service CPU per call over the rounds,
 * and each as a ratio of `bare`.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const ROUND_MS = Number(process.env.BENCH_DURATION_MS ?? 5_000)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32)

/** CPU time (user + system) the process has used so far, in ms (Linux /proc, 100 ticks a second). */
const cpuMs = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const startSink = async () => {
  const server = http.createServer((req, res) => {
    req.resume()
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}"))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, close: () => server.close() }
}

export const run = async () => {
  const db = await createBenchDatabase()
  const provider = await startBenchProvider({ ok: true })
  const sink = await startSink()
  const services: Array<{ name: string; service: RunningService }> = []
  const pool = new pg.Pool({ connectionString: db.url, max: 2 })
  try {
    const common = { DATABASE_URL: db.url, PROVIDERS_UPSTREAM: provider.url }
    services.push({ name: "bare", service: await startService({ ...common, ACCESS_LOG: "false" }) })
    services.push({ name: "default", service: await startService(common) })
    services.push({ name: "otlp", service: await startService({ ...common, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url }) })
    await seedBenchEndpoint(pool, { id: "benchprov/ping", name: "Ping", category: "people", path: "/v1/ping" })
    const keys = await seedLiveAgentKeys(db.url, 8, 8)
    const load = (service: RunningService, durationMs: number, offset: number) =>
      runLoad({
        url: `${service.url}/v1/call`,
        durationMs,
        connections: CONNECTIONS,
        request: (i) => ({
          method: "POST",
          headers: { authorization: `Bearer ${keys[(i + offset) % keys.length]}` },
          body: JSON.stringify({ endpoint: "benchprov/ping" })
        })
      })
    for (const { service } of services) await load(service, 2_000, 0)

    const results = new Map<string, Array<{ result: LoadResult; cpuPerCall: number }>>()
    const loadBefore = loadavg()[0]!
    for (let round = 0; round < ROUNDS; round++) {
      for (const { name, service } of services) {
        const pid = service.process.pid!
        const before = cpuMs(pid)
        const result = await load(service, ROUND_MS, round * 1000)
        const cpuPerCall = (cpuMs(pid) - before) / Math.max(1, result.requests)
        results.set(name, [...(results.get(name) ?? []), { result, cpuPerCall }])
      }
    }
    const loadAfter = loadavg()[0]!

    console.log(
      `\nObservability overhead: closed loop, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${ROUND_MS / 1000} s`
    )
    console.log(`Machine load (1-minute average) before ${loadBefore.toFixed(2)}, after ${loadAfter.toFixed(2)}`)
    const bare = results.get("bare")!
    const bareRps = median(bare.map((r) => r.result.rps))
    const bareCpu = median(bare.map((r) => r.cpuPerCall))
    for (const [name, rounds] of results) {
      const rps = median(rounds.map((r) => r.result.rps))
      const cpu = median(rounds.map((r) => r.cpuPerCall))
      const errors = rounds.reduce((sum, r) => sum + r.result.errors, 0)
      const p50 = median(rounds.map((r) => r.result.p50))
      console.log(
        `  ${name.padEnd(8)} ${rps.toFixed(0).padStart(5)} calls/s (x${(rps / bareRps).toFixed(2)})  ` +
          `service CPU ${cpu.toFixed(2)} ms/call (x${(cpu / bareCpu).toFixed(2)})  p50 ${
            p50.toFixed(1)
          } ms  errors ${errors}  ` +
          `rounds ${rounds.map((r) => r.result.rps.toFixed(0)).join("/")}`
      )
    }
  } finally {
    for (const { service } of services) await service.stop()
    await pool.end()
    provider.close()
    sink.close()
    await db.drop()
  }
}
