import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { PublicUrl } from "../../Services/PublicUrl.js"
import { documentFor } from "../OpenApi/Document.js"

/** `GET /openapi.json`: the contract, made once, with this service's address as its server. */
export const OpenApiRouteLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const response = HttpServerResponse.unsafeJson(documentFor(yield* PublicUrl))
    yield* router.get("/openapi.json", Effect.succeed(response))
  })
)
