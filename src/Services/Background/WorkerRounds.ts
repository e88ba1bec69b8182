import { Metric } from "effect"

/**
 * Rounds of a background worker that ended with everything they found done, by worker: a
 * durable-row worker's round that found nothing due and nothing in flight, an auto-reload
 * round (its charges made). `/metrics` prints them; tests wait on them instead of sleeping
 * (two more rounds than they saw means one began after their change and ended).
 */
export const workerRounds = Metric.counter("worker_rounds_total", {
  description: "Rounds of a background worker that ended with all the work they found done",
  incremental: true
})

export const roundEnded = (worker: string) => Metric.increment(Metric.tagged(workerRounds, "worker", worker))
