import * as http from "node:http"
import { formatRow, runLoad } from "./support/load.js"
import { createBenchDatabase, startService } from "./support/service.js"

/**
 * A public endpoint of the service (`GET /v1/task-types`, through the edge middleware and
 * the per-address rate limiter) against a bare node:http server answering the same bytes,
 * under the same load generator in one run. Each request comes from its own forwarded
 * address (the service trusts 127.0.0.1 as a proxy here) so the rate limit is counted but
 * never reached.
 */
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 10_000)
const CONNECTIONS = 32

export const run = async () => {
  const db = await createBenchDatabase()
  const service = await startService({ DATABASE_URL: db.url, TRUSTED_PROXIES: "127.0.0.1" })
  const body = await (await fetch(`${service.url}/v1/task-types`)).text()
  const bare = http.createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
    res.end(body)
  })
  await new Promise<void>((resolve) => bare.listen(0, "127.0.0.1", resolve))
  const barePort = (bare.address() as { port: number }).port
  try {
    const forwarded = (i: number) => ({
      headers: { "x-forwarded-for": `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` }
    })
    // Warm both up before measuring.
    await runLoad({
      url: `${service.url}/v1/task-types`,
      durationMs: 2000,
      connections: CONNECTIONS,
      request: forwarded
    })
    await runLoad({ url: `http://127.0.0.1:${barePort}/`, durationMs: 1000, connections: CONNECTIONS })
    const serviceResult = await runLoad({
      url: `${service.url}/v1/task-types`,
      durationMs: DURATION_MS,
      connections: CONNECTIONS,
      request: (i) => forwarded(i + 1_000_000)
    })
    const bareResult = await runLoad({
      url: `http://127.0.0.1:${barePort}/`,
      durationMs: DURATION_MS,
      connections: CONNECTIONS
    })
    console.log(`\nPublic endpoint vs bare node:http (${CONNECTIONS} connections, ${DURATION_MS / 1000} s each)`)
    console.log(formatRow("bare node:http, same JSON", bareResult))
    console.log(formatRow("service GET /v1/task-types", serviceResult))
    console.log(
      `ratio service/bare: throughput ${(serviceResult.rps / bareResult.rps).toFixed(3)}, p50 ${
        (serviceResult.p50 / bareResult.p50).toFixed(2)
      }x, p99 ${(serviceResult.p99 / bareResult.p99).toFixed(2)}x`
    )
  } finally {
    bare.close()
    await service.stop()
    await db.drop()
  }
}
