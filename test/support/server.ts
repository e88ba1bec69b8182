import { HttpServer } from "@effect/platform"
import { Effect, Layer, ManagedRuntime } from "effect"
import * as http from "node:http"
import { ServerLive } from "../../src/Layers/Server.js"
import { Lifecycle } from "../../src/Services/Lifecycle/Lifecycle.js"
import { PublicUrl } from "../../src/Services/PublicUrl.js"
import { configOf } from "./config.js"

/**
 * Starts the whole service in this process on a free port, configured only by `env`
 * (nothing is read from the ambient environment), and answers its address.
 */
export interface TestServer {
  /** Where the server listens (loopback). */
  readonly url: string
  /** Its public base address (BASE_URL, or the same as url). */
  readonly baseUrl: string
  /** Runs an effect against the running service's own services (its Lifecycle, say). */
  readonly run: <A, E>(effect: Effect.Effect<A, E, Lifecycle>) => Promise<A>
  readonly close: () => Promise<void>
}

export const startServer = async (
  env: Record<string, string>,
  /** Optional extra context for the whole service (e.g. `Layer.setClock(...)` for a clock the test moves). */
  extra: Layer.Layer<never> = Layer.empty
): Promise<TestServer> => {
  const config = configOf({ LOG_LEVEL: "Warn", ...env })
  const runtime = ManagedRuntime.make(
    ServerLive.pipe(Layer.provide(Layer.setConfigProvider(config)), Layer.provide(extra))
  )
  const [baseUrl, httpServer] = await runtime.runPromise(Effect.all([PublicUrl, HttpServer.HttpServer]))
  const port = httpServer.address._tag === "TcpAddress" ? httpServer.address.port : 0
  return {
    url: `http://127.0.0.1:${port}`,
    baseUrl,
    run: (effect) => runtime.runPromise(effect),
    close: () => runtime.dispose()
  }
}

/** JSON request helper: answers status, headers and parsed body. */
export const request = async (
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown; rawBody?: string } = {}
) => {
  const headers: Record<string, string> = { ...init.headers }
  let body: string | undefined
  if (init.rawBody !== undefined) body = init.rawBody
  else if (init.body !== undefined) {
    body = JSON.stringify(init.body)
    headers["content-type"] ??= "application/json"
  }
  const response = await fetch(url, { method: init.method ?? "GET", headers, body, redirect: "manual" })
  const text = await response.text()
  let json: any = undefined
  try {
    json = text.length > 0 ? JSON.parse(text) : undefined
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, json, text }
}

export interface RawRequest {
  readonly method: string
  readonly path: string
  readonly headers?: Record<string, string | number>
  /** Written one by one: with `transfer-encoding: chunked`, a body of unknown length. */
  readonly chunks?: ReadonlyArray<string>
}

/** Sends a raw request (node:http) so chunked bodies and exact headers can be controlled. */
export const rawRequest = (serverUrl: string, options: RawRequest) =>
  new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port: Number(new URL(serverUrl).port),
        method: options.method,
        path: options.path,
        headers: options.headers
      },
      (res) => {
        let body = ""
        res.on("data", (chunk) => (body += chunk))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
      }
    )
    req.on("error", reject)
    for (const chunk of options.chunks ?? []) req.write(chunk)
    req.end()
  })
