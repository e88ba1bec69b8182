import { Effect, Metric } from "effect"
import { workerRounds } from "../../src/Services/Background/WorkerRounds.js"
import { eventually } from "./world.js"

/** The service's background workers, by the name their rounds are counted under. */
export type Worker = "mail worker" | "webhook worker" | "auto-reload"

const roundsOf = (worker: Worker) =>
  Number(Effect.runSync(Metric.value(Metric.tagged(workerRounds, "worker", worker))).count)

/**
 * Waits until each of `workers` (of the services running in this process) has ended a round
 * that began after this call, with all the work it found done: what a test waits on before
 * saying that something did NOT happen. Two more rounds than counted now, since the round
 * under way may have begun before; `rounds` more where several services share the count.
 * Never a fixed sleep: a slow machine only waits longer (up to `timeoutMs`).
 */
export const workersSettled = async (
  workers: ReadonlyArray<Worker>,
  options: { readonly rounds?: number; readonly timeoutMs?: number } = {}
) => {
  const rounds = options.rounds ?? 2
  const from = workers.map(roundsOf)
  await eventually(() => workers.every((worker, i) => roundsOf(worker) >= from[i]! + rounds), {
    what: `a settled round of the ${workers.join(" and ")}`,
    timeoutMs: options.timeoutMs ?? 30_000,
    intervalMs: 20
  })
}
