import { Effect, Metric } from "effect"
import { workerRounds } from "../../src/Services/Background/WorkerRounds.js"
import { eventually } from "./world.js"

/** The service's background workers, by the name their rounds are counted under. */
export type Worker = "mail worker" | "webhook worker" | "auto-reload"

const roundsOf = (worker: Worker) =>
  Number(Effect.runSync(Metric.value(Metric.tagged(workerRounds, "worker", worker))).count)

/**
 * Counts the rounds `workers` (of the services running in this process) end from now on,
 * each with all the work it found done; `ended(n)` waits until each has ended `n` more.
 * Never a fixed sleep: a slow machine only waits longer (up to `timeoutMs`).
 */
export const roundsFrom = (workers: ReadonlyArray<Worker>) => {
  const from = workers.map(roundsOf)
  return {
    ended: (rounds: number, timeoutMs = 30_000) =>
      eventually(() => workers.every((worker, i) => roundsOf(worker) >= from[i]! + rounds), {
        what: `${rounds} more rounds of the ${workers.join(" and ")}`,
        timeoutMs,
        intervalMs: 20
      })
  }
}

/**
 * Waits until each of `workers` has ended a round that began after this call: what a test
 * waits on before saying that something did NOT happen. Two more rounds than counted now,
 * since the round under way may have begun before; `rounds` more where several services in
 * this process share the count.
 */
export const workersSettled = async (
  workers: ReadonlyArray<Worker>,
  options: { readonly rounds?: number; readonly timeoutMs?: number } = {}
) => {
  await roundsFrom(workers).ended(options.rounds ?? 2, options.timeoutMs)
}
