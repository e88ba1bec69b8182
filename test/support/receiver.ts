import * as http from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A real webhook receiver on loopback. Its answer can be switched between a 2xx, a 5xx, a
 * slow answer (past the 10-second limit), a redirect, or no answer at all; every request is
 * recorded with its raw body and its headers as sent (names with their case).
 */
export type ReceiverMode =
  | { readonly kind: "ok"; readonly status?: number }
  | { readonly kind: "fail"; readonly status?: number }
  | { readonly kind: "slow"; readonly delayMs: number }
  | { readonly kind: "redirect"; readonly status?: number }
  | { readonly kind: "silent" }

export interface ReceivedDelivery {
  readonly path: string
  readonly method: string
  readonly rawHeaders: ReadonlyArray<readonly [string, string]>
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
  readonly receivedAt: number
}

export interface TestReceiver {
  readonly url: string
  readonly port: number
  readonly received: Array<ReceivedDelivery>
  setMode: (mode: ReceiverMode) => void
  /** Requests that reached the redirect target (must stay empty: redirects are never followed). */
  readonly redirectTargetHits: Array<ReceivedDelivery>
  readonly close: () => Promise<void>
}

export const startReceiver = async (initial: ReceiverMode = { kind: "ok" }): Promise<TestReceiver> => {
  let mode: ReceiverMode = initial
  const received: Array<ReceivedDelivery> = []
  const redirectTargetHits: Array<ReceivedDelivery> = []
  const hanging = new Set<http.ServerResponse>()
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const pairs: Array<readonly [string, string]> = []
      for (let i = 0; i < req.rawHeaders.length; i += 2) pairs.push([req.rawHeaders[i]!, req.rawHeaders[i + 1]!])
      const entry: ReceivedDelivery = {
        path: req.url ?? "",
        method: req.method ?? "",
        rawHeaders: pairs,
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        receivedAt: Date.now()
      }
      if (req.url === "/redirect-target") {
        redirectTargetHits.push(entry)
        res.writeHead(200).end("ok")
        return
      }
      received.push(entry)
      switch (mode.kind) {
        case "ok":
          res.writeHead(mode.status ?? 200, { "content-type": "text/plain" }).end("ok")
          return
        case "fail":
          res.writeHead(mode.status ?? 500, { "content-type": "text/plain" }).end("boom")
          return
        case "slow": {
          hanging.add(res)
          const timer = setTimeout(() => {
            hanging.delete(res)
            if (!res.destroyed) res.writeHead(200).end("late")
          }, mode.delayMs)
          res.on("close", () => clearTimeout(timer))
          return
        }
        case "redirect":
          res.writeHead(mode.status ?? 302, { location: `http://127.0.0.1:${port}/redirect-target` }).end()
          return
        case "silent":
          hanging.add(res)
          return
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    redirectTargetHits,
    setMode: (next) => {
      mode = next
    },
    close: async () => {
      for (const res of hanging) res.destroy()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

/** A loopback port with nothing listening (connection refused). */
export const closedPort = async (): Promise<number> => {
  const server = http.createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}
