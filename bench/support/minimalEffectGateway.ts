import {
  HttpApi,
  HttpApiBuilder,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSchema,
  HttpApiSecurity,
  HttpClient,
  HttpServer
} from "@effect/platform"
import { NodeHttpClient, NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Redacted, Schema } from "effect"
import { createHash, randomUUID } from "node:crypto"
import { createServer } from "node:http"
import pg from "pg"
import { PreparingClient } from "../../src/Layers/PreparedStatements.js"
import { endpointId, hold, holdParams, keyLookup, price, providerUrl, settle } from "./referenceStatements.js"

/**
 * The second reference of `npm run bench -- gateway`: the reference gateway's work (the
 * same three statements, the same provider call; referenceGateway.ts) written on the
 * service's own stack, the least of it: an Effect HttpApi endpoint with a bearer-key
 * middleware, `@effect/sql` on a pool of the service's preparing `pg` clients, the
 * platform's HTTP client (undici) for the provider. Nothing else: no edge checks, rate
 * limits, quotas, call log, metrics or logs. What it costs beside the plain reference is
 * what the stack itself costs for this work. Run as its own process; prints `ready <port>`.
 * Settings: DATABASE_URL, PROVIDERS_UPSTREAM, REFERENCE_ENDPOINT (id), REFERENCE_PRICE (credits).
 */

class Refused extends Schema.TaggedError<Refused>()(
  "Refused",
  { code: Schema.String },
  HttpApiSchema.annotations({
    status: 402
  })
) {}
class Unauthenticated
  extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", {}, HttpApiSchema.annotations({ status: 401 }))
{}
class UnknownEndpoint
  extends Schema.TaggedError<UnknownEndpoint>()("UnknownEndpoint", {}, HttpApiSchema.annotations({ status: 404 }))
{}

class CurrentAgent
  extends Context.Tag("CurrentAgent")<CurrentAgent, { readonly id: string; readonly org_id: string }>()
{}

class AgentKey extends HttpApiMiddleware.Tag<AgentKey>()("AgentKey", {
  failure: Unauthenticated,
  provides: CurrentAgent,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

const CallResult = Schema.Struct({
  call_id: Schema.String,
  endpoint: Schema.String,
  status: Schema.String,
  charged: Schema.String,
  data: Schema.Unknown
})

class GatewayApi extends HttpApi.make("minimal-gateway").add(
  HttpApiGroup.make("gateway").add(
    HttpApiEndpoint.post("call", "/v1/call")
      .setPayload(Schema.Struct({
        endpoint: Schema.String,
        query: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
      }))
      .addSuccess(CallResult)
      .addError(Refused)
      .addError(UnknownEndpoint)
  ).middleware(AgentKey)
) {}

const AgentKeyLive = Layer.effect(
  AgentKey,
  Effect.map(SqlClient.SqlClient, (sql) => ({
    bearer: (token: Redacted.Redacted<string>) =>
      sql.unsafe<{ id: string; org_id: string }>(keyLookup.text, [
        createHash("sha256").update(Redacted.value(token)).digest("hex")
      ]).pipe(
        Effect.orDie,
        Effect.flatMap((rows) => rows.length === 0 ? Effect.fail(new Unauthenticated()) : Effect.succeed(rows[0]!))
      )
  }))
)

const GatewayHandlers = HttpApiBuilder.group(GatewayApi, "gateway", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const client = yield* HttpClient.HttpClient
    return handlers.handle("call", ({ payload }) =>
      Effect.gen(function*() {
        const agent = yield* CurrentAgent
        if (payload.endpoint !== endpointId) return yield* new UnknownEndpoint()
        const holdId = randomUUID()
        const held = yield* sql.unsafe(hold.text, holdParams(holdId, agent))
          .pipe(Effect.orDie)
        if (held.length === 0) return yield* new Refused({ code: "insufficient_credits" })
        const data = yield* client.get(providerUrl(payload.query))
          .pipe(
            Effect.flatMap((response) => response.json),
            Effect.scoped,
            Effect.orDie
          )
        yield* sql.unsafe(settle.text, [holdId, randomUUID()]).pipe(Effect.orDie)
        return { call_id: holdId, endpoint: endpointId, status: "succeeded", charged: price, data }
      }))
  }))

const SqlLive = PgClient.layerFromPool({
  acquire: Effect.acquireRelease(
    Effect.sync(() => new pg.Pool({ connectionString: process.env["DATABASE_URL"], max: 20, Client: PreparingClient })),
    (pool) => Effect.promise(() => pool.end())
  )
})

const Ready = Layer.effectDiscard(
  Effect.flatMap(
    HttpServer.HttpServer,
    (server) => Effect.sync(() => console.log(`ready ${(server.address as HttpServer.TcpAddress).port}`))
  )
)

HttpApiBuilder.serve().pipe(
  Layer.provide(HttpApiBuilder.api(GatewayApi).pipe(Layer.provide(GatewayHandlers), Layer.provide(AgentKeyLive))),
  Layer.merge(Ready),
  Layer.provide(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
  Layer.provide(SqlLive),
  Layer.provide(NodeHttpClient.layerUndici),
  Layer.launch,
  NodeRuntime.runMain
)
