import * as http from "node:http"

/**
 * A small HTTP load generator shared by the benchmarks: keep-alive connections, either
 * closed-loop (each connection sends its next request when the previous answers) or at a
 * fixed rate, with latencies measured per request and summarised as p50 / p99.
 */
export interface LoadOptions {
  readonly url: string
  readonly durationMs: number
  readonly connections: number
  /** Requests per second to send at; omit for closed-loop (as fast as answers come). */
  readonly ratePerSecond?: number
  /** Builds each request (method, headers, body); called once per request. */
  readonly request?: (index: number) => { method?: string; headers?: Record<string, string>; body?: string }
  /** Which answers count as errors (default: anything but 2xx). */
  readonly isError?: (status: number) => boolean
}

export interface LoadResult {
  readonly requests: number
  readonly errors: number
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly statuses: Record<number, number>
}

const percentile = (sorted: Float64Array, p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

export const runLoad = (options: LoadOptions): Promise<LoadResult> =>
  new Promise((resolve) => {
    const target = new URL(options.url)
    const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections })
    const latencies: Array<number> = []
    const statuses: Record<number, number> = {}
    let errors = 0
    let sent = 0
    let inFlight = 0
    const started = performance.now()
    const deadline = started + options.durationMs
    const isError = options.isError ?? ((status: number) => status < 200 || status >= 300)
    let finished = false

    const finish = () => {
      if (finished || inFlight > 0 || performance.now() < deadline) return
      finished = true
      agent.destroy()
      const elapsed = (performance.now() - started) / 1000
      const sorted = Float64Array.from(latencies).sort()
      resolve({
        requests: latencies.length,
        errors,
        rps: latencies.length / elapsed,
        p50: percentile(sorted, 50),
        p99: percentile(sorted, 99),
        statuses
      })
    }

    const fire = (onDone: () => void) => {
      const index = sent++
      const spec = options.request?.(index) ?? {}
      const begin = performance.now()
      inFlight++
      const req = http.request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: target.pathname + target.search,
          method: spec.method ?? "GET",
          headers: spec.body === undefined
            ? spec.headers
            : { "content-type": "application/json", "content-length": Buffer.byteLength(spec.body), ...spec.headers }
        },
        (res) => {
          res.resume()
          res.on("end", () => {
            latencies.push(performance.now() - begin)
            statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1
            if (isError(res.statusCode ?? 0)) errors++
            inFlight--
            onDone()
          })
        }
      )
      req.on("error", () => {
        errors++
        inFlight--
        onDone()
      })
      if (spec.body !== undefined) req.write(spec.body)
      req.end()
    }

    if (options.ratePerSecond === undefined) {
      const loop = () => (performance.now() < deadline ? fire(loop) : finish())
      for (let i = 0; i < options.connections; i++) loop()
    } else {
      const interval = 1000 / options.ratePerSecond
      let next = started
      const tick = () => {
        const now = performance.now()
        while (next <= now && now < deadline) {
          fire(finish)
          next += interval
        }
        if (now < deadline) setTimeout(tick, Math.max(0, next - performance.now()))
        else finish()
      }
      tick()
    }
  })

export const formatRow = (label: string, result: LoadResult) =>
  `${label.padEnd(34)} ${result.rps.toFixed(0).padStart(8)} req/s   p50 ${result.p50.toFixed(2).padStart(7)} ms   p99 ${
    result.p99.toFixed(2).padStart(7)
  } ms   errors ${result.errors}`
