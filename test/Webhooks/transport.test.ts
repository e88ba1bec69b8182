import { Effect } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { postWebhook } from "../../src/Services/Webhooks/WebhookHttp.js"

/**
 * The delivery transport on its own, against a real receiver on loopback that drops a
 * kept-alive connection when it is used again (as a receiver whose keep-alive ran out does).
 */
let server: http.Server
let url: string
const seen: Array<{ socketRequest: number }> = []

beforeAll(async () => {
  const perSocket = new WeakMap<object, number>()
  server = http.createServer((req, res) => {
    const n = (perSocket.get(req.socket) ?? 0) + 1
    perSocket.set(req.socket, n)
    seen.push({ socketRequest: n })
    req.resume()
    req.on("end", () => {
      if (n > 1) return req.socket.destroy()
      res.writeHead(200).end("ok")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

const post = () =>
  Effect.runPromise(
    postWebhook({ url, headers: { "Content-Type": "application/json" }, body: "{}", policy: { allowLoopback: true } })
  )

describe("delivery transport", () => {
  it("sends again on a new connection when a reused kept-alive one was closed by the receiver", async () => {
    expect(await post()).toEqual({ delivered: true, statusCode: 200, error: null })
    // The second POST goes out on the kept-alive connection, which the receiver drops; it
    // is sent once more on a fresh connection and delivered.
    expect(await post()).toEqual({ delivered: true, statusCode: 200, error: null })
    expect(seen.map((s) => s.socketRequest)).toEqual([1, 2, 1])
  })
})
