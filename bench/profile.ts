import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { processCpuMs } from "./support/cpu.js"
import { runLoad } from "./support/load.js"
import {
  benchPersonAnswer,
  createBenchDatabase,
  seedGatewayCalls,
  seedPurchases,
  startBenchProvider,
  startService
} from "./support/service.js"

/**
 * `npm run bench:profile -- <gateway|execute|task-types>`: the service under a closed loop
 * (32 connections; 16 for execute, single-input purchases) with Node's CPU profiler on, then
 * the profile's top items over the loaded window only (start-up and warm-up left out): self
 * time by package and by function. The profile file is kept (its path is printed) for a
 * closer look in a profile viewer.
 */
const target = process.argv[2] ?? "gateway"
const seconds = Number(process.env.PROFILE_SECONDS ?? 10)

interface CpuProfile {
  readonly nodes: ReadonlyArray<
    {
      readonly id: number
      readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
    }
  >
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
  readonly startTime: number
  readonly endTime: number
}

/** Self time per key over the profile's last `windowSeconds`, as shares of the busy time. */
const topItems = (
  profile: CpuProfile,
  windowSeconds: number,
  keyOf: (url: string, fn: string, line: number) => string
) => {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node.callFrame]))
  const from = profile.endTime - windowSeconds * 1e6
  const totals = new Map<string, number>()
  let busy = 0
  let at = profile.startTime
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0
    const frame = nodes.get(id)!
    if (at < from || frame.functionName === "(idle)") return
    const key = keyOf(frame.url, frame.functionName, frame.lineNumber)
    totals.set(key, (totals.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0))
    busy += profile.timeDeltas[i] ?? 0
  })
  return [...totals].sort((a, b) => b[1] - a[1]).map(([key, us]) => ({ key, share: us / busy }))
}

const shortUrl = (url: string) => url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*?\/(src|bench)\//, "$1/")
const packageOf = (url: string, fn: string) => {
  if (url === "") return fn
  const inModules = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url)
  if (inModules) return inModules[1]!
  return shortUrl(url).replace(/^(src\/[^/]+\/[^/]+).*$/, "$1").replace(/^node:.*$/, "node (core)")
}

const profileDir = mkdtempSync(join(tmpdir(), "profile-"))
process.env.BENCH_NODE_ARGS = `--cpu-prof --cpu-prof-dir=${profileDir}`
const db = await createBenchDatabase()
const provider = await startBenchProvider(benchPersonAnswer)
const service = await startService({
  DATABASE_URL: db.url,
  PROVIDERS_UPSTREAM: provider.url,
  TRUSTED_PROXIES: "127.0.0.1",
  ...JSON.parse(process.env.BENCH_SERVICE_ENV ?? "{}")
})
const pool = new pg.Pool({ connectionString: db.url, max: 2 })
try {
  let load: Parameters<typeof runLoad>[0]
  if (target === "gateway") {
    const { call } = await seedGatewayCalls(pool, db.url, 16, 8)
    load = { url: `${service.url}/v1/call`, durationMs: seconds * 1000, connections: 64, request: call }
  } else if (target === "execute") {
    const { purchase } = await seedPurchases(pool, 32)
    load = { url: `${service.url}/v1/execute`, durationMs: seconds * 1000, connections: 16, request: purchase }
  } else {
    // Each request from its own forwarded address, so the public limit is not what is measured.
    load = {
      url: `${service.url}/v1/task-types`,
      durationMs: seconds * 1000,
      connections: 32,
      request: (i) => ({ headers: { "x-forwarded-for": `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` } })
    }
  }
  // The warm-up's requests are numbered apart, so no purchase of the run replays one of its keys.
  const { request } = load
  await runLoad({ ...load, durationMs: 3000, ...(request ? { request: (i: number) => request(i + 10_000_000) } : {}) })
  const cpuBefore = processCpuMs(service.process.pid!)
  const result = await runLoad(load)
  const cpuMs = (processCpuMs(service.process.pid!) - cpuBefore) / Math.max(1, result.requests)
  console.log(`${target}: ${result.rps.toFixed(0)} req/s under the profiler, ${cpuMs.toFixed(2)} ms CPU per request`)
} finally {
  await pool.end()
  await service.stop()
  provider.close()
  await db.drop()
}

const files = readdirSync(profileDir).map((name) => join(profileDir, name))
const file = files.sort((a, b) => statSync(b).size - statSync(a).size)[0]!
const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile
const print = (title: string, items: ReturnType<typeof topItems>, count: number) => {
  console.log(`\n${title}`)
  for (const item of items.slice(0, count)) console.log(`${(100 * item.share).toFixed(1).padStart(5)}%  ${item.key}`)
}
print("Self time by package (share of busy time):", topItems(profile, seconds, (url, fn) => packageOf(url, fn)), 12)
print(
  "Self time by function:",
  topItems(profile, seconds, (url, fn, line) => `${fn || "(anonymous)"} ${shortUrl(url)}${url ? `:${line + 1}` : ""}`),
  20
)
for (const other of files.filter((f) => f !== file)) rmSync(other)
console.log(`\nProfile: ${file}`)
