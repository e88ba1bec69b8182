import {
  Etag,
  FileSystem,
  HttpApi,
  HttpApiBuilder,
  HttpIncomingMessage,
  HttpPlatform,
  HttpServer,
  Path
} from "@effect/platform"
import { Context, Effect, Layer } from "effect"

type RequestServices =
  | HttpServer.HttpServer
  | HttpApi.Api
  | HttpPlatform.HttpPlatform
  | Etag.Generator
  | FileSystem.FileSystem
  | Path.Path

/**
 * `HttpApiBuilder.serve()` built on only the services a request reads from its fiber's
 * context: the platform's own (`HttpRouter.DefaultServices`, the only ones its router and
 * app may require) and the body limit (`EdgeDefaults`). Handlers and middlewares take the
 * app's services when they are built (`HttpApiBuilder.group`, `HttpApiBuilder.middleware`,
 * `Router.use`), not per request.
 *
 * Why: every request starts from the server's context, and the platform copies it several
 * times a request (the router's route context, each handler's merge with its group's
 * services). Served on the whole app's context, that was a hundred-odd entries a copy.
 */
export const ServeApiLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const memoMap = yield* Layer.CurrentMemoMap
    const scope = yield* Effect.scope
    // The same memo map as the rest of the app, so the routes the handlers registered are the ones served.
    yield* Layer.buildWithMemoMap(HttpApiBuilder.serve(), memoMap, scope).pipe(
      Effect.mapInputContext((all: Context.Context<RequestServices>) =>
        Context.pick(
          HttpServer.HttpServer,
          HttpApi.Api,
          HttpPlatform.HttpPlatform,
          Etag.Generator,
          FileSystem.FileSystem,
          Path.Path,
          HttpIncomingMessage.MaxBodySize
        )(all)
      )
    )
  })
)
