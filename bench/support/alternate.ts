import * as os from "node:os"
import { postgresCpuMsBetween, postgresTicks, servicesCpuMs } from "./cpu.js"
import { type LoadOptions, runLoad } from "./load.js"

/**
 * Two services (say, two commits) under the same closed loop in short alternating slices,
 * so that a machine whose speed drifts from minute to minute (it does here: a bare server's
 * rate moves by half between runs) slows both alike: slice i of one runs right before
 * slice i of the other, the order swapping every pair. Per side: requests a second over
 * all its slices, CPU a request in its process and in PostgreSQL (only one side is loaded
 * at a time, so PostgreSQL's CPU in a slice is that side's), and the ratio of the first
 * side to the second slice pair by slice pair, as median and range.
 */
export interface Side {
  readonly name: string
  readonly url: string
  /** The service's processes (their workers are counted with them). */
  readonly pids: ReadonlyArray<number>
  readonly request: NonNullable<LoadOptions["request"]>
}

export interface SideResult {
  readonly name: string
  readonly requests: number
  readonly errors: number
  readonly rps: number
  readonly serviceCpuMs: number
  readonly postgresCpuMs: number
}

export const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

export const alternate = async (
  sides: readonly [Side, Side],
  options: { readonly slices: number; readonly sliceMs: number; readonly connections: number }
) => {
  const totals = sides.map(() => ({ requests: 0, errors: 0, seconds: 0, serviceCpuMs: 0, postgresCpuMs: 0 }))
  const ratios: Array<number> = []
  // Past any index a warm-up used.
  let offset = 100_000_000
  for (let slice = 0; slice < options.slices; slice++) {
    const rates = [0, 0]
    const order = slice % 2 === 0 ? [0, 1] : [1, 0]
    for (const index of order) {
      const side = sides[index]!
      const cpuBefore = servicesCpuMs(side.pids)
      const postgresBefore = postgresTicks()
      const started = performance.now()
      const result = await runLoad({
        url: side.url,
        durationMs: options.sliceMs,
        connections: options.connections,
        request: (i) => side.request(offset + i)
      })
      const total = totals[index]!
      total.seconds += (performance.now() - started) / 1000
      total.requests += result.requests
      total.errors += result.errors
      total.serviceCpuMs += servicesCpuMs(side.pids) - cpuBefore
      total.postgresCpuMs += postgresCpuMsBetween(postgresBefore, postgresTicks())
      rates[index] = result.rps
    }
    // Requests of later slices must not reuse an earlier slice's indexes (idempotency keys).
    offset += 1_000_000
    ratios.push(rates[0]! / Math.max(rates[1]!, 1e-9))
  }
  const results: Array<SideResult> = sides.map((side, index) => {
    const total = totals[index]!
    const requests = Math.max(1, total.requests)
    return {
      name: side.name,
      requests: total.requests,
      errors: total.errors,
      rps: total.requests / total.seconds,
      serviceCpuMs: total.serviceCpuMs / requests,
      postgresCpuMs: total.postgresCpuMs / requests
    }
  })
  return {
    results,
    ratio: { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) }
  }
}

/**
 * Prints an alternation's outcome: each side's rate and CPU a request (in its process and in
 * PostgreSQL), then the first side's ratio to the second and the load average around the run.
 */
export const printAlternation = (
  outcome: Awaited<ReturnType<typeof alternate>>,
  words: { readonly rate: string; readonly each: string },
  loadBefore: number
) => {
  const { ratio, results } = outcome
  for (const result of results) {
    console.log(
      `${result.name}: ${
        result.rps.toFixed(1)
      } ${words.rate} (${result.requests} answered, ${result.errors} errors); ` +
        `CPU ${words.each} ${result.serviceCpuMs.toFixed(2)} ms in the service, ${
          result.postgresCpuMs.toFixed(2)
        } ms in PostgreSQL`
    )
  }
  const cpu = (result: SideResult) => result.serviceCpuMs + result.postgresCpuMs
  console.log(
    `${results[0]!.name} against ${results[1]!.name}, slice by slice: ${ratio.median.toFixed(2)}x (${
      ratio.min.toFixed(2)
    }–${ratio.max.toFixed(2)}); over all slices ${(results[0]!.rps / results[1]!.rps).toFixed(2)}x; CPU ${words.each} ${
      (cpu(results[0]!) / cpu(results[1]!)).toFixed(2)
    }x; load average (1 min) ${loadBefore.toFixed(2)} before, ${os.loadavg()[0]!.toFixed(2)} after`
  )
}
