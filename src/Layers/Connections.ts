import { Config, Effect, Layer, Option } from "effect"
import * as fs from "node:fs"
import type { Server } from "node:http"
import type { Socket } from "node:net"
import { PublicUrl } from "../Services/PublicUrl.js"
import { rawAnswer } from "./ClientErrors.js"

/**
 * Every accepted connection gets a whole HTTP answer, however many arrive.
 *
 * Open files: each connection is a file descriptor (Node raises its soft limit to the hard
 * one at start; the hard one is the bound). A process out of them can accept nothing, and
 * Node (libuv) then closes every connection waiting in the kernel's accept queue without a
 * word, while the pool's new connections fail too (500s). So connections are budgeted
 * within the limit: what it leaves after the descriptors open at start, the pool, one
 * outgoing connection per running request and a margin goes half to connections served
 * (MAX_CONNECTIONS, at most 4096, so memory stays bounded), a quarter to the accept queue
 * (the listen backlog: a burst is accepted in one go before any of it is answered) and a
 * quarter to connections being refused. A connection past the budget is answered
 * 503 `service_unavailable` with `Retry-After` at once and closed, without being parsed or
 * queued, as soon as its request has been read, since closing on unread bytes would reset
 * the connection and could lose the answer. Connections past the
 * accept queue wait in the client's kernel (its handshake is retried) instead of being
 * reset. A hard limit far below a burst can still run out (raise it: LimitNOFILE).
 */

/** The hard limit on open files, from /proc (Linux); undefined elsewhere or when unlimited. */
const openFilesLimit = (): number | undefined => {
  try {
    const line = /^Max open files\s+\S+\s+(\d+)/m.exec(fs.readFileSync("/proc/self/limits", "utf8"))
    return line === null ? undefined : Number(line[1])
  } catch {
    return undefined
  }
}

export interface ConnectionLimits {
  /** Connections served at once; more are answered 503 and closed. */
  readonly served: number
  /** The listen backlog. */
  readonly backlog: number
}

const MAX_SERVED = 4096

/** Descriptors this process has open now (Linux); 0 elsewhere. */
const openNow = () => {
  try {
    return fs.readdirSync("/proc/self/fd").length
  } catch {
    return 0
  }
}

export const connectionLimits = Effect.gen(function*() {
  const configured = yield* Config.option(Config.integer("MAX_CONNECTIONS"))
  const poolSize = yield* Config.integer("DATABASE_POOL_SIZE").pipe(Config.withDefault(20))
  const running = yield* Config.integer("MAX_CONCURRENT_REQUESTS").pipe(Config.withDefault(256))
  const files = openFilesLimit()
  const available = files === undefined
    ? 2 * MAX_SERVED
    : Math.max(128, files - openNow() - poolSize - running - 64)
  // Half served, a quarter for the accept queue, a quarter for connections being refused.
  const served = Option.getOrElse(configured, () => Math.min(MAX_SERVED, Math.floor(available / 2)))
  return { served, backlog: Math.max(64, Math.min(MAX_SERVED, Math.floor(available / 4))) } satisfies ConnectionLimits
})

const SHED_LINGER_MS = 2000

/** Whether `data` holds a whole request: its head, and as many body bytes as Content-Length says. */
const requestComplete = (data: Buffer) => {
  const headEnd = data.indexOf("\r\n\r\n")
  if (headEnd < 0) return false
  const length = /\r\ncontent-length:[ \t]*(\d+)/i.exec(data.subarray(0, headEnd).toString("latin1"))
  return data.length >= headEnd + 4 + Number(length?.[1] ?? 0)
}

export const ConnectionsLive = (server: Server, limits: ConnectionLimits) =>
  Layer.scopedDiscard(
    Effect.gen(function*() {
      const baseUrl = yield* PublicUrl

      const answer = rawAnswer(
        baseUrl,
        "service_unavailable",
        "The service is over capacity (too many connections); retry shortly",
        { "retry-after": "1" }
      )
      /**
       * Answers a connection past the budget at once, and closes it as soon as its whole
       * request has been read (a close on unread bytes would reset the connection and could
       * lose the answer), or when its client closes, or after SHED_LINGER_MS.
       */
      const shed = (socket: Socket) => {
        socket.on("error", () => socket.destroy())
        socket.setTimeout(SHED_LINGER_MS, () => socket.destroy())
        socket.once("end", () => socket.destroy())
        let received = Buffer.alloc(0)
        let sent = false
        const closeWhenRead = () => {
          if (sent && requestComplete(received)) socket.destroy()
        }
        socket.on("data", (chunk: Buffer) => {
          received = received.length < 65_536 ? Buffer.concat([received, chunk]) : received
          closeWhenRead()
        })
        socket.end(answer, () => {
          sent = true
          closeWhenRead()
        })
      }

      // Node's own handler for a new connection (it parses HTTP on it); served within the budget.
      const [serve] = server.listeners("connection") as Array<(socket: Socket) => void>
      let open = 0
      const onConnection = (socket: Socket) => {
        open++
        socket.once("close", () => open--)
        if (open <= limits.served || serve === undefined) serve?.call(server, socket)
        else shed(socket)
      }
      yield* Effect.acquireRelease(
        Effect.sync(() => {
          if (serve !== undefined) server.off("connection", serve)
          server.on("connection", onConnection)
        }),
        () =>
          Effect.sync(() => {
            server.off("connection", onConnection)
            if (serve !== undefined) server.on("connection", serve)
          })
      )
    })
  )
