import * as net from "node:net"

/**
 * Many concurrent connections on loopback, one request each, and what each got back: the
 * status of a complete HTTP answer, or how it ended without one. Every socket is bounded by
 * `deadlineMs` (then destroyed and counted as `no_answer`), so a run always stops by itself.
 */
export type Outcome =
  | { readonly kind: "answered"; readonly status: number; readonly headers: string; readonly body: string }
  | { readonly kind: "reset" | "closed" | "no_answer" | "refused"; readonly detail: string }

export interface ConnectionResult {
  readonly outcome: Outcome
  /** The order in which this connection's answer (or end) arrived, from 0. */
  readonly arrival: number
  /** When it arrived, in ms after the first connection was opened. */
  readonly ms: number
}

/** Reads one HTTP/1.1 answer with Content-Length from `data`; undefined while incomplete. */
const parseAnswer = (data: Buffer) => {
  const end = data.indexOf("\r\n\r\n")
  if (end < 0) return undefined
  const head = data.subarray(0, end).toString("latin1")
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0)
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? "-1")
  if (length < 0 || data.length < end + 4 + length) return undefined
  return { status, headers: head, body: data.subarray(end + 4, end + 4 + length).toString("utf8") }
}

export const openConnections = (options: {
  readonly port: number
  readonly count: number
  /** The request written on every connection (a whole HTTP/1.1 message). */
  readonly request: string
  readonly deadlineMs: number
}): Promise<Array<ConnectionResult>> => {
  const started = Date.now()
  let arrivals = 0
  const one = () =>
    new Promise<ConnectionResult>((resolve) => {
      const socket = net.connect(options.port, "127.0.0.1")
      let data = Buffer.alloc(0)
      let connected = false
      let settled = false
      const settle = (outcome: Outcome) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        socket.destroy()
        resolve({ outcome, arrival: arrivals++, ms: Date.now() - started })
      }
      const timer = setTimeout(
        () => settle({ kind: "no_answer", detail: `nothing within ${options.deadlineMs} ms` }),
        options.deadlineMs
      )
      socket.on("connect", () => {
        connected = true
        socket.write(options.request)
      })
      socket.on("data", (chunk: Buffer) => {
        data = Buffer.concat([data, chunk])
        const answer = parseAnswer(data)
        if (answer !== undefined) settle({ kind: "answered", ...answer })
      })
      socket.on("error", (error: NodeJS.ErrnoException) => {
        if (!connected) return settle({ kind: "refused", detail: error.code ?? error.message })
        settle({ kind: "reset", detail: `${error.code ?? error.message} after ${data.length} bytes` })
      })
      socket.on("close", () => settle({ kind: "closed", detail: `closed after ${data.length} bytes` }))
    })
  return Promise.all(Array.from({ length: options.count }, one))
}

/** How many of each outcome (status for answers, kind otherwise). */
export const tally = (results: ReadonlyArray<ConnectionResult>) => {
  const counts: Record<string, number> = {}
  for (const { outcome } of results) {
    const key = outcome.kind === "answered" ? String(outcome.status) : outcome.kind
    counts[key] = (counts[key] ?? 0) + 1
  }
  return counts
}
