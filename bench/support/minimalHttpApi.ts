import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpServer } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Schema } from "effect"
import { readFileSync } from "node:fs"
import { createServer } from "node:http"
import { TaskTypeList } from "../../src/Http/Groups/PublicGroup.js"

/**
 * The baseline of `npm run bench -- publicEndpoint`: the smallest Effect HttpApi server that
 * answers `GET /v1/task-types` with the service's own answer, encoded through the same schema
 * (no middleware, no rate limit, no database). Run as its own process, like the service;
 * prints `ready <port>`. BENCH_BODY_FILE names the JSON to answer.
 */
const body = Schema.decodeUnknownSync(TaskTypeList)(JSON.parse(readFileSync(process.env["BENCH_BODY_FILE"]!, "utf8")))

class MinimalApi extends HttpApi.make("minimal").add(
  HttpApiGroup.make("public").add(HttpApiEndpoint.get("taskTypes", "/v1/task-types").addSuccess(TaskTypeList))
) {}

const Handlers = HttpApiBuilder.group(
  MinimalApi,
  "public",
  (handlers) => handlers.handle("taskTypes", () => Effect.succeed(body))
)

const Ready = Layer.effectDiscard(
  Effect.flatMap(
    HttpServer.HttpServer,
    (server) => Effect.sync(() => console.log(`ready ${(server.address as HttpServer.TcpAddress).port}`))
  )
)

HttpApiBuilder.serve().pipe(
  Layer.provide(HttpApiBuilder.api(MinimalApi).pipe(Layer.provide(Handlers))),
  Layer.merge(Ready),
  Layer.provide(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
  Layer.launch,
  NodeRuntime.runMain
)
