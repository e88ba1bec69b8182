import { Schema } from "effect"
import { AnyJson } from "./Json.js"

/**
 * What a gateway call asks for: the same shape for `POST /v1/call`, the MCP `call_endpoint`
 * tool and the gateway service, decoded at the edge of each entry point.
 */
const ParamObject = Schema.Record({ key: Schema.String, value: AnyJson })

export const CallRequest = Schema.Struct({
  endpoint: Schema.String.pipe(Schema.minLength(1, { message: () => "`endpoint` is required" })).annotations({
    description: "Endpoint id, `<provider>/<endpoint_slug>`"
  }),
  query: Schema.optional(ParamObject.annotations({ description: "Query parameters, passed to the provider" })),
  body: Schema.optional(ParamObject.annotations({ description: "JSON body, passed to the provider (not for GET)" })),
  path_params: Schema.optional(
    ParamObject.annotations({ description: "One value per `{name}` placeholder of the endpoint's path" })
  ),
  max_price: Schema.optional(
    Schema.Number.pipe(Schema.nonNegative({ message: () => "`max_price` must be a number of credits, zero or more" }))
      .annotations({ description: "Refuse the call if it costs more credits" })
  )
}).annotations({ identifier: "CallRequest" })

export type CallRequest = typeof CallRequest.Type
