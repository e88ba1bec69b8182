import { NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { ServerLive } from "./Layers/Server.js"

Layer.launch(ServerLive).pipe(NodeRuntime.runMain)
