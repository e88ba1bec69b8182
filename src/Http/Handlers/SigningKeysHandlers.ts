import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { SigningKeys } from "../../Services/Receipts/SigningKeys.js"
import { Api } from "../Api.js"

export const SigningKeysHandlers = HttpApiBuilder.group(Api, "signingKeys", (handlers) =>
  Effect.gen(function*() {
    const keys = yield* SigningKeys
    return handlers.handle("jwks", () => Effect.map(keys.published, (published) => ({ keys: published })))
  }))
