import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentActor } from "../../Domain/Current.js"
import { OrgKeys } from "../../Services/OrgKeys/OrgKeys.js"
import { Api } from "../Api.js"

export const OrgKeysHandlers = HttpApiBuilder.group(Api, "orgKeys", (handlers) =>
  Effect.gen(function*() {
    const keys = yield* OrgKeys
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentActor, (actor) => keys.create(actor, payload.name, payload.scope)))
      .handle("list", () =>
        Effect.map(Effect.flatMap(CurrentActor, keys.list), (list) => ({ keys: list })))
      .handle("revoke", ({ path }) => Effect.flatMap(CurrentActor, (actor) => keys.revoke(actor, path.keyId)))
  }))
