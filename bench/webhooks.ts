import { createHmac } from "node:crypto"
import * as http from "node:http"
import * as os from "node:os"
import pg from "pg"
import { eventEmitter } from "../test/support/eventEmitter.js"
import { seedOrg } from "../test/support/fixtures.js"
import { processCpuMs } from "./support/cpu.js"
import { runLoad } from "./support/load.js"
import { createBenchDatabase, fixturesOf, startBenchProvider, startService } from "./support/service.js"

/**
 * Webhook deliveries per second to a loopback receiver, measured from outside the service
 * (a child process, as `npm start` runs it, on a fresh PostgreSQL database):
 * 1. backlog, three rounds, median and range: N events are written while the service is
 *    down, then it starts and drains them (deliveries per second, first to last receipt, and
 *    the service's CPU per delivery over that window, from /proc);
 * 2. steady: the service runs while N events are emitted as fast as transactions commit
 *    (deliveries per second, and the time from the event's creation to its receipt).
 * The receiver checks every signature (HMAC-SHA256) and counts each event once. A bare
 * node:http server under a closed loop is the machine's yardstick, so figures from machines
 * of different speed compare as deliveries per 1,000 of its requests.
 */
const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 3_000)
const EMIT_CONCURRENCY = 8
const ROUNDS = 3

const percentile = (values: Array<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

const startReceiver = async () => {
  let secret = ""
  const seen = new Set<string>()
  const latencies: Array<number> = []
  let first = 0
  let last = 0
  let badSignatures = 0
  let waiter: { count: number; resolve: () => void } | undefined
  let onFirst: (() => void) | undefined
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8")
      const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(req.headers["service-signature"])) ?? []
      if (v1 !== createHmac("sha256", secret).update(`${t}.${body}`).digest("hex")) badSignatures++
      const event = JSON.parse(body) as { id: string; created_at: string }
      const now = Date.now()
      if (!seen.has(event.id)) {
        seen.add(event.id)
        latencies.push(now - Date.parse(event.created_at))
        if (first === 0) {
          first = now
          onFirst?.()
        }
        last = now
      }
      res.writeHead(200).end()
      if (waiter !== undefined && seen.size >= waiter.count) waiter.resolve()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`,
    setSecret: (value: string) => {
      secret = value
    },
    /** Runs `hook` at the next first receipt (after a reset). */
    atFirst: (hook: () => void) => {
      onFirst = hook
    },
    reset: () => {
      onFirst = undefined
      seen.clear()
      latencies.length = 0
      first = 0
      last = 0
    },
    waitFor: (count: number) =>
      new Promise<void>((resolve) => {
        if (seen.size >= count) return resolve()
        waiter = { count, resolve }
      }),
    stats: () => ({ count: seen.size, first, last, latencies: [...latencies], badSignatures }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

const emitMany = async (emit: (i: number) => Promise<unknown>, count: number) => {
  let next = 0
  await Promise.all(Array.from({ length: EMIT_CONCURRENCY }, async () => {
    while (next < count) await emit(next++)
  }))
}

export const run = async () => {
  const db = await createBenchDatabase()
  const pool = new pg.Pool({ connectionString: db.url, max: 4 })
  const testDb = fixturesOf(pool, db.url)
  const receiver = await startReceiver()
  let service = await startService({ DATABASE_URL: db.url })
  const emitter = eventEmitter(testDb, {}, undefined, EMIT_CONCURRENCY)
  try {
    const org = await seedOrg(testDb)
    const created = await (await fetch(`${service.url}/v1/orgs/${org.orgId}/webhooks`, {
      method: "POST",
      headers: { authorization: `Bearer ${org.owner.sessionToken}`, "content-type": "application/json" },
      body: JSON.stringify({ url: receiver.url })
    })).json() as { webhook: { secret: string } }
    receiver.setSecret(created.webhook.secret)
    const emit = (i: number) =>
      emitter.emit(org.orgId, {
        type: "job.completed",
        data: { job_id: `job-${i}`, status: "done", receipt_id: `receipt-${i}`, item_count: 30, passed: 30, expired: 0 }
      })

    // 1. Backlogs drained by a freshly started service.
    const drains: Array<{ rate: number; withStart: number; cpuMs: number }> = []
    for (let round = 0; round < ROUNDS; round++) {
      await service.stop()
      receiver.reset()
      await emitMany((i) => emit(round * EVENTS + i), EVENTS)
      const restarted = Date.now()
      service = await startService({ DATABASE_URL: db.url })
      const pid = service.process.pid!
      // CPU per delivery from the first receipt on, or from now over the deliveries still to
      // come when the drain began while the service was starting.
      let measuredFrom = { cpuMs: processCpuMs(pid), received: receiver.stats().count }
      if (measuredFrom.received === 0) {
        receiver.atFirst(() => {
          measuredFrom = { cpuMs: processCpuMs(pid), received: 0 }
        })
      }
      await receiver.waitFor(EVENTS)
      const cpuMs = (processCpuMs(pid) - measuredFrom.cpuMs) / (EVENTS - measuredFrom.received)
      const backlog = receiver.stats()
      drains.push({
        rate: EVENTS / ((backlog.last - backlog.first) / 1000),
        withStart: (backlog.last - restarted) / 1000,
        cpuMs
      })
    }
    const bare = await startBenchProvider({ ok: true })
    const yardstick = await runLoad({ url: `${bare.url}/`, durationMs: 5_000, connections: 16 })
    bare.close()
    const rates = drains.map((drain) => drain.rate).sort((a, b) => a - b)
    const middle = drains.find((drain) => drain.rate === rates[Math.floor(ROUNDS / 2)])!
    console.log(
      `\nWebhook deliveries to a loopback receiver (${EVENTS} events, one endpoint, worker concurrency ${
        process.env.WEBHOOK_WORKER_CONCURRENCY ?? 64
      })`
    )
    console.log(
      `backlog drain        ${middle.rate.toFixed(0).padStart(7)} deliveries/s   (median of ${ROUNDS}, range ${
        rates[0]!.toFixed(0)
      }–${rates[ROUNDS - 1]!.toFixed(0)}; ${middle.withStart.toFixed(2)} s including start-up; service CPU ${
        middle.cpuMs.toFixed(2)
      } ms a delivery)`
    )
    console.log(
      `machine yardstick: bare node:http ${
        yardstick.rps.toFixed(0)
      } req/s; backlog deliveries per 1,000 of its requests: ${
        (1000 * middle.rate / yardstick.rps).toFixed(1)
      }; load average (1 min) ${os.loadavg()[0]!.toFixed(2)}`
    )

    // 2. Steady state: events emitted while the service runs.
    receiver.reset()
    const started = Date.now()
    await emitMany((i) => emit(ROUNDS * EVENTS + i), EVENTS)
    const emitSeconds = (Date.now() - started) / 1000
    await receiver.waitFor(EVENTS)
    const steady = receiver.stats()
    const steadySeconds = (steady.last - started) / 1000
    console.log(
      `steady state         ${(EVENTS / steadySeconds).toFixed(0).padStart(7)} deliveries/s   (emitted at ${
        (EVENTS / emitSeconds).toFixed(0)
      } events/s; event to receipt p50 ${percentile(steady.latencies, 50)} ms, p99 ${
        percentile(steady.latencies, 99)
      } ms)`
    )
    console.log(`signatures that failed to verify: ${steady.badSignatures}`)
  } finally {
    await emitter.close()
    await service.stop()
    await receiver.close()
    await pool.end()
    await db.drop()
  }
}
