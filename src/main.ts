import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import cluster from "node:cluster"
import { runPrimary, workerProcesses } from "./Layers/Cluster.js"
import { LoggingLive } from "./Layers/Logging.js"
import { ServerLive } from "./Layers/Server.js"

// The first SIGTERM or SIGINT starts a clean shutdown (see Layers/Shutdown.ts); another
// one while it drains means "now": the process exits at once. A copy of the first signal
// that arrives within half a second (a terminal signals the whole process group, and a
// launcher such as tsx or npm, or the cluster's primary, relays it too) is the same request.
let firstSignalAt: number | undefined
const onSignal = (signal: NodeJS.Signals) => {
  const now = Date.now()
  if (firstSignalAt === undefined || now - firstSignalAt < 500) {
    firstSignalAt ??= now
    return
  }
  console.error(`${signal} again: exiting without waiting for requests in flight`)
  process.exit(130)
}

/**
 * One process serving, or (WORKER_PROCESSES above 1) the primary of several
 * (Layers/Cluster.ts). The primary runs outside `runMain`, which would end it on the first
 * signal while its workers still drain.
 */
const processes = Effect.runSync(Effect.either(workerProcesses))
if (processes._tag === "Left") {
  console.error(`Not started: ${processes.left}`)
  process.exitCode = 1
} else if (cluster.isPrimary && processes.right > 1) {
  Effect.runPromise(Effect.either(runPrimary(processes.right)).pipe(Effect.provide(LoggingLive))).then((outcome) => {
    if (outcome._tag === "Left") {
      console.error(`Not started: ${outcome.left}`)
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill("SIGKILL")
      process.exitCode = 1
    }
  })
} else {
  process.on("SIGINT", onSignal)
  process.on("SIGTERM", onSignal)
  // A worker's log lines name it, so a log shows which process answered.
  const server = Layer.launch(ServerLive)
  // LOG_FORMAT picks the logger (Layers/Logging.ts); runMain's own pretty logger would
  // write every line a second time.
  NodeRuntime.runMain(cluster.isWorker ? Effect.annotateLogs(server, "worker", String(cluster.worker!.id)) : server, {
    disablePrettyLogger: true
  })
}
