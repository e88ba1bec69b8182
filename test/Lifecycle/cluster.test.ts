import { spawn } from "node:child_process"
import { randomInt } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ChildService, killChildService, startChildService } from "../support/childService.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { serviceCommand } from "../support/serviceBuild.js"
import { eventually } from "../support/world.js"

/**
 * WORKER_PROCESSES=2: two processes share the port, each the whole service; rate limits are
 * counted in Redis so they stay exact across both; a signal drains both and the primary
 * exits once they have gone.
 */
const redisUrl = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379"
let db: TestDatabase
let service: ChildService

beforeAll(async () => {
  db = await createTestDatabase("cluster")
  service = await startChildService({
    WORKER_PROCESSES: "2",
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl,
    TRUSTED_PROXIES: "127.0.0.1",
    LOG_FORMAT: "json"
  })
  await eventually(() => service.output().includes("All 2 worker processes ready"), {
    timeoutMs: 120_000,
    what: "both workers"
  })
})

afterAll(async () => {
  if (service !== undefined) await killChildService(service)
  await db?.drop()
})

/** The pid of each worker that is running now, by worker id. */
const runningWorkerPids = (output: string) => {
  const pids: Record<string, number> = {}
  for (const m of output.matchAll(/worker (\d+) \(pid (\d+)\) ready/g)) pids[m[1]!] = Number(m[2])
  for (const m of output.matchAll(/worker (\d+) \(pid \d+\) exited/g)) delete pids[m[1]!]
  return pids
}

/** The worker that wrote the access-log line of each request id. */
const workersOf = (requestIds: ReadonlyArray<string>) => {
  const wanted = new Set(requestIds)
  const workers = new Map<string, string>()
  for (const line of service.output().split("\n")) {
    if (!line.startsWith("{")) continue
    const entry = JSON.parse(line) as { message?: unknown; annotations?: Record<string, unknown> }
    const id = entry.annotations?.["request_id"]
    if (entry.message === "request" && typeof id === "string" && wanted.has(id)) {
      workers.set(id, String(entry.annotations?.["worker"]))
    }
  }
  return workers
}

describe("several worker processes (WORKER_PROCESSES)", () => {
  it("share the port, and a rate limit stays exact across them", async () => {
    // The waitlist allows 10 sign-ups an hour per address: 14 from one address, 10 accepted,
    // whichever process each one reached.
    // Redis keeps its counts between runs: an address no earlier run used.
    const ip = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`
    const statuses: Array<number> = []
    const requestIds: Array<string> = []
    for (let i = 0; i < 14; i++) {
      const res = await fetch(`${service.url}/v1/waitlist`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": ip },
        body: JSON.stringify({ email: `cluster-${i}@example.com` })
      })
      statuses.push(res.status)
      requestIds.push(res.headers.get("request-id")!)
    }
    expect(statuses.filter((s) => s === 202)).toHaveLength(10)
    expect(statuses.filter((s) => s === 429)).toHaveLength(4)
    const workers = await eventually(() => {
      const seen = workersOf(requestIds)
      return seen.size === requestIds.length ? seen : false
    }, { what: "the access-log lines of every request" })
    expect(new Set(workers.values())).toEqual(new Set(["1", "2"]))
    // The primary's own lines (workers ready) are JSON too, like the workers'.
    const lines = service.output().split("\n").filter((line) => line.length > 0)
    expect(lines.filter((line) => !line.startsWith("{"))).toEqual([])
    expect(lines.filter((line) => line.includes("All 2 worker processes ready"))).toHaveLength(1)
  })

  it("replaces a worker that dies; the port keeps answering", async () => {
    const first = runningWorkerPids(service.output())["1"]!
    process.kill(first, "SIGKILL")
    await eventually(() => /worker 3 \(pid \d+\) ready/.test(service.output()), {
      timeoutMs: 60_000,
      what: "a new worker"
    })
    expect(service.output()).toContain(`worker 1 (pid ${first}) exited (SIGKILL); starting another`)
    for (let i = 0; i < 4; i++) expect((await fetch(`${service.url}/healthz`)).status).toBe(200)
  })

  it("drains every worker on SIGTERM; the primary exits 0 once they have gone", async () => {
    const pids = Object.values(runningWorkerPids(service.output()))
    expect(pids).toHaveLength(2)
    const exited = new Promise<number | null>((resolve) => service.process.once("exit", (code) => resolve(code)))
    service.process.kill("SIGTERM")
    expect(await exited).toBe(0)
    for (const pid of pids) {
      await eventually(() => {
        try {
          process.kill(pid, 0)
          return false
        } catch {
          return true
        }
      }, { what: `worker pid ${pid} to exit` })
    }
  })

  it("refuses to start without DATABASE_URL or REDIS_URL, naming what is missing", async () => {
    const refused = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const { BASE_URL: _base, DATABASE_URL: _db, REDIS_URL: _redis, ...inherited } = process.env
      const [node, ...args] = serviceCommand()
      const child = spawn(node, args, {
        env: { ...inherited, PORT: "0", WORKER_PROCESSES: "2" },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let output = ""
      child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
      child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
      child.once("exit", (code) => resolve({ code, output }))
    })
    expect(refused.code).toBe(1)
    expect(refused.output).toContain("WORKER_PROCESSES above 1 needs DATABASE_URL")
    expect(refused.output).toContain("and REDIS_URL")
  })
})
