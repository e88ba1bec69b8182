import { NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { ServerLive } from "./Layers/Server.js"

// The first SIGTERM or SIGINT starts a clean shutdown (see Layers/Shutdown.ts); another
// one while it drains means "now": the process exits at once. A copy of the first signal
// that arrives within half a second (a terminal signals the whole process group, and a
// launcher such as tsx or npm relays it too) is the same request, not a second one.
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
process.on("SIGINT", onSignal)
process.on("SIGTERM", onSignal)

Layer.launch(ServerLive).pipe(NodeRuntime.runMain)
