import { Config, Deferred, Duration, Effect, Option, Runtime } from "effect"
import cluster, { type Worker } from "node:cluster"

/**
 * Several processes sharing the port (WORKER_PROCESSES, default 1): the primary process only
 * starts and watches the workers; each worker is the whole service (its own pool, its own
 * background workers, which share work through `FOR UPDATE SKIP LOCKED` rows). Rate limits
 * stay exact across them because they are counted in Redis, so REDIS_URL is required, and
 * DATABASE_URL too (the embedded database belongs to one process).
 *
 * Workers start one after another (each migrates and loads the catalogue before the next
 * begins). A worker that dies on its own is replaced after a second. SIGTERM or SIGINT goes
 * to every worker, which drains as a single process would; the primary exits when they
 * have all gone. The primary's own lines are written like the workers' (LOG_FORMAT).
 */
export const workerProcesses = Config.integer("WORKER_PROCESSES").pipe(
  Config.withDefault(1),
  Config.validate({ message: "WORKER_PROCESSES must be 1 to 64", validation: (n) => n >= 1 && n <= 64 })
)

/** What a worker tells the primary once it serves. */
export interface WorkerReady {
  readonly type: "ready"
  readonly url: string
}

const isReady = (message: unknown): message is WorkerReady =>
  typeof message === "object" && message !== null && (message as { type?: unknown }).type === "ready"

/** In a worker: tells the primary it serves (nothing outside a cluster). */
export const announceReady = (url: string) =>
  Effect.sync(() => {
    if (cluster.isWorker) process.send?.({ type: "ready", url } satisfies WorkerReady)
  })

/** The settings a cluster cannot do without, named when missing. */
const requiredSettings = Effect.gen(function*() {
  const database = yield* Config.option(Config.string("DATABASE_URL"))
  const redis = yield* Config.option(Config.string("REDIS_URL"))
  const missing = [
    ...(Option.isNone(database) ? ["DATABASE_URL (the embedded database belongs to one process)"] : []),
    ...(Option.isNone(redis) ? ["REDIS_URL (rate limits are counted in Redis to stay exact across processes)"] : [])
  ]
  if (missing.length > 0) {
    return yield* Effect.fail(`WORKER_PROCESSES above 1 needs ${missing.join(" and ")}`)
  }
})

const READY_TIMEOUT = Duration.minutes(2)

/** Forks one worker and waits until it serves (or fails to start); says when it is ready. */
const startWorker = (stopping: () => boolean) =>
  Effect.async<Worker, string>((resume) => {
    const worker = cluster.fork()
    const onMessage = (message: unknown) => {
      if (!isReady(message)) return
      worker.off("exit", onExit)
      resume(Effect.as(Effect.logInfo(`worker ${worker.id} (pid ${worker.process.pid}) ready`), worker))
    }
    const onExit = (code: number | null) => {
      worker.off("message", onMessage)
      resume(Effect.fail(stopping() ? "stopping" : `worker ${worker.id} exited (${code}) before it was ready`))
    }
    worker.on("message", onMessage)
    worker.once("exit", onExit)
  }).pipe(
    Effect.timeoutFail({ duration: READY_TIMEOUT, onTimeout: () => "a worker was not ready within 2 minutes" })
  )

/** The primary process: start the workers, replace one that dies, pass shutdown signals on. */
export const runPrimary = (count: number) =>
  Effect.gen(function*() {
    yield* requiredSettings
    let stopping = false
    const allGone = yield* Deferred.make<void>()
    const runtime = yield* Effect.runtime<never>()
    const live = () => Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined)

    const doneIfAllGone = () => {
      if (live().length === 0) Runtime.runSync(runtime)(Deferred.succeed(allGone, undefined))
    }
    const log = Runtime.runSync(runtime)
    const stop = (signal: NodeJS.Signals) => {
      if (!stopping) log(Effect.logInfo(`${signal}: stopping ${live().length} worker processes`))
      stopping = true
      for (const worker of live()) worker.process.kill(signal)
      doneIfAllGone()
    }
    process.on("SIGTERM", () => stop("SIGTERM"))
    process.on("SIGINT", () => stop("SIGINT"))

    cluster.on("exit", (worker, code, signal) => {
      if (stopping) return doneIfAllGone()
      log(
        Effect.logWarning(
          `worker ${worker.id} (pid ${worker.process.pid}) exited (${code ?? signal}); starting another`
        )
      )
      Runtime.runFork(runtime)(
        Effect.sleep(Duration.seconds(1)).pipe(
          Effect.zipRight(startWorker(() => stopping)),
          Effect.catchAll((problem) => Effect.logError(problem))
        )
      )
    })

    for (let i = 0; i < count && !stopping; i++) yield* startWorker(() => stopping)
    if (!stopping) yield* Effect.logInfo(`All ${count} worker processes ready`)
    yield* Deferred.await(allGone)
  })
