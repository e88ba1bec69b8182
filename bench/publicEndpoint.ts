import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { formatRow, type LoadResult, runLoad } from "./support/load.js"
import { createBenchDatabase, startReadyChild, startService } from "./support/service.js"

/**
 * Public data against its baselines, side by side in one run, three rounds, medians:
 * - the smallest Effect HttpApi server answering `GET /v1/task-types` with the same answer
 *   through the same schema (bench/support/minimalHttpApi.ts), and a bare node:http server
 *   answering the same bytes (the machine's ceiling), each in a process of its own;
 * - the service's `GET /v1/task-types` (edge middleware, per-address rate limit);
 * - the service's `GET /v1/endpoints?q=` (a catalogue search, priced for a plan).
 * Targets: task-types at least 0.8x the minimal HttpApi endpoint; endpoints?q= at least 0.5x
 * task-types. Each request comes from its own forwarded address (the service trusts
 * 127.0.0.1 as a proxy here) so the rate limit is counted but never reached.
 * BENCH_SERVICE_ENV (JSON) adds settings to the service, e.g. '{"ACCESS_LOG":"false"}';
 * BENCH_ROUNDS and BENCH_DURATION_MS change the rounds.
 */
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const CONNECTIONS = 32

const bareServer = `
const body = require("node:fs").readFileSync(process.env.BENCH_BODY_FILE)
const server = require("node:http").createServer((_req, res) => {
  res.writeHead(200, { "content-type": "application/json", "content-length": body.length })
  res.end(body)
})
server.listen(0, "127.0.0.1", () => console.log("ready " + server.address().port))`

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const range = (values: ReadonlyArray<number>) => `${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)}`

export const run = async () => {
  // The machine's load before the benchmark adds its own (the load generator and a server
  // keep both cores busy while it runs).
  const loadBefore = os.loadavg()[0]!
  const db = await createBenchDatabase()
  const service = await startService({
    DATABASE_URL: db.url,
    TRUSTED_PROXIES: "127.0.0.1",
    ...JSON.parse(process.env.BENCH_SERVICE_ENV ?? "{}")
  })
  const bodyFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "bench-public-")), "task-types.json")
  fs.writeFileSync(bodyFile, await (await fetch(`${service.url}/v1/task-types`)).text())
  const minimal = await startReadyChild(["--import", "tsx", "bench/support/minimalHttpApi.ts"], {
    BENCH_BODY_FILE: bodyFile
  })
  const bare = await startReadyChild(["-e", bareServer], { BENCH_BODY_FILE: bodyFile })
  let address = 0
  const forwarded = () => ({
    headers: { "x-forwarded-for": `10.${(++address >> 16) & 255}.${(address >> 8) & 255}.${address & 255}` }
  })
  const targets = [
    { label: "bare node:http, same bytes", url: `${bare.url}/` },
    { label: "minimal Effect HttpApi", url: `${minimal.url}/v1/task-types` },
    { label: "service GET /v1/task-types", url: `${service.url}/v1/task-types`, request: forwarded },
    { label: "service GET /v1/endpoints?q=", url: `${service.url}/v1/endpoints?q=email%20finder`, request: forwarded }
  ]
  const results = new Map<string, Array<LoadResult>>(targets.map((t) => [t.label, []]))
  const loads: Array<number> = []
  try {
    for (const target of targets) await runLoad({ ...target, durationMs: 1500, connections: CONNECTIONS })
    for (let round = 1; round <= ROUNDS; round++) {
      loads.push(os.loadavg()[0]!)
      for (const target of targets) {
        results.get(target.label)!.push(await runLoad({ ...target, durationMs: DURATION_MS, connections: CONNECTIONS }))
      }
    }
    console.log(`\nPublic data (${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION_MS / 1000} s, medians)`)
    const medianRps = new Map<string, number>()
    for (const [label, rounds] of results) {
      const rps = rounds.map((r) => r.rps)
      medianRps.set(label, median(rps))
      const mid = rounds.find((r) => r.rps === median(rps))!
      console.log(
        `${formatRow(label, mid)}   (range ${range(rps)} req/s, errors ${rounds.reduce((n, r) => n + r.errors, 0)})`
      )
    }
    const ratio = (a: string, b: string) => (medianRps.get(a)! / medianRps.get(b)!).toFixed(2)
    console.log(
      `task-types / minimal HttpApi: ${ratio("service GET /v1/task-types", "minimal Effect HttpApi")} (target 0.8)`
    )
    console.log(
      `endpoints?q= / task-types: ${ratio("service GET /v1/endpoints?q=", "service GET /v1/task-types")} (target 0.5)`
    )
    console.log(
      `load average (1 min) before: ${loadBefore.toFixed(2)}${
        loadBefore > 2 ? "  NOT COMPARABLE: the machine was busy" : ""
      }; at each round (the benchmark's own included): ${loads.map((l) => l.toFixed(2)).join(", ")}`
    )
  } finally {
    minimal.child.kill("SIGTERM")
    bare.child.kill("SIGTERM")
    await service.stop()
    await db.drop()
  }
}
