import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentActor } from "../../Services/Auth/Current.js"
import { Usage } from "../../Services/Usage/Usage.js"
import { Api } from "../Api.js"

export const UsageHandlers = HttpApiBuilder.group(Api, "usage", (handlers) =>
  Effect.gen(function*() {
    const usage = yield* Usage
    return handlers.handle(
      "get",
      ({ urlParams }) => Effect.flatMap(CurrentActor, (actor) => usage.get(actor, urlParams))
    )
  }))
