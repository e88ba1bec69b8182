import * as net from "node:net"
import { describe, expect, it } from "vitest"
import { request } from "../../support/server.js"
import { base, world } from "./world.js"

/**
 * Bad input answers 400 `invalid_input` (or 413) with the common error body and a message
 * naming the problem, at the edge, whatever the route: never a 500, never Node's empty answer.
 */

const url = (path: string) => `${world.server.url}${path}`

const expectError = (res: { status: number; json: any }, status: number, code: string, message: RegExp) => {
  expect(res.status).toBe(status)
  expect(res.json).toEqual({
    error: { code, message: expect.stringMatching(message), doc_url: `${base}/docs/errors#${code}`, retryable: false }
  })
}

/** Writes bytes straight to the socket (Node's parser sees exactly them) and reads the whole answer. */
const sendRaw = (bytes: string | Buffer) =>
  new Promise<{ status: number; json: any; head: string }>((resolve, reject) => {
    const socket = net.connect(Number(new URL(world.server.url).port), "127.0.0.1")
    const chunks: Array<Buffer> = []
    socket.on("data", (chunk) => chunks.push(chunk))
    socket.on("error", reject)
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8")
      const [head = "", body = ""] = text.split("\r\n\r\n", 2)
      let json: any
      try {
        json = JSON.parse(body)
      } catch {
        json = undefined
      }
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), json, head })
    })
    socket.end(bytes)
  })

export const badInputCases = () => {
  describe("bodies that are not clean JSON", () => {
    it("refuses a JSON body sent as multipart, naming the Content-Type", async () => {
      const res = await request(url("/auth/email/start"), {
        method: "POST",
        headers: { "content-type": "multipart/form-data; boundary=x" },
        rawBody: JSON.stringify({ email: "a@example.com" })
      })
      expectError(res, 400, "invalid_input", /^Content-Type must be application\/json, not multipart\/form-data$/)
    })

    it("refuses a body without a Content-Type", async () => {
      const res = await sendRaw(
        "POST /v1/waitlist HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}"
      )
      expectError(res, 400, "invalid_input", /^Content-Type is missing/)
    })

    it("refuses an empty multipart body rather than failing to read it", async () => {
      const res = await request(url("/v1/waitlist"), {
        method: "POST",
        headers: { "content-type": "multipart/form-data; boundary=x" }
      })
      expectError(res, 400, "invalid_input", /^Content-Type must be application\/json/)
    })

    it("refuses a body nested 5,000 levels deep", async () => {
      const nested = "[".repeat(5000) + "]".repeat(5000)
      const res = await request(url("/auth/email/start"), {
        method: "POST",
        headers: { "content-type": "application/json" },
        rawBody: `{"email":${nested}}`
      })
      expectError(res, 400, "invalid_input", /nested deeper than 64 levels/)
    })

    it("refuses a NUL character in a body string or field name", async () => {
      const inValue = await request(url("/v1/waitlist"), { method: "POST", body: { email: "a\u0000@example.com" } })
      expectError(inValue, 400, "invalid_input", /^`email` contains a NUL character$/)
      const inKey = await request(url("/v1/waitlist"), { method: "POST", body: { "e\u0000": "x" } })
      expectError(inKey, 400, "invalid_input", /field name .* contains a NUL character/)
    })

    it("refuses a number too large to represent", async () => {
      const res = await request(url("/v1/waitlist"), {
        method: "POST",
        headers: { "content-type": "application/json" },
        rawBody: "{\"email\":\"a@example.com\",\"amount\":1e999}"
      })
      expectError(res, 400, "invalid_input", /^`amount` is a number too large/)
    })
  })

  describe("targets", () => {
    it("refuses a NUL in the query, even where no credential is needed", async () => {
      expectError(
        await request(url("/v1/endpoints?q=%00")),
        400,
        "invalid_input",
        /^The query contains a NUL character$/
      )
    })

    it("refuses a malformed percent-escape", async () => {
      expectError(await request(url("/v1/endpoints?q=%E0%A4")), 400, "invalid_input", /malformed percent-escape/)
      expectError(
        await request(url("/v1/tools/%zz")),
        400,
        "invalid_input",
        /^The path has a malformed percent-escape$/
      )
    })
  })

  describe("what Node's own parser refuses gets the service's body", () => {
    const cases: Array<[string, string, number, string, RegExp]> = [
      ["a NUL in the path", "GET /v1/to\u0000ols HTTP/1.1\r\nhost: x\r\n\r\n", 400, "invalid_input", /path/],
      ["a space in the path", "GET /v1/to ols HTTP/1.1\r\nhost: x\r\n\r\n", 400, "invalid_input", /./],
      [
        "a control character in a header",
        "GET /v1/tools HTTP/1.1\r\nhost: x\r\nx-a: b\u0001c\r\n\r\n",
        400,
        "invalid_input",
        /header/
      ],
      [
        "a negative Content-Length",
        "POST /v1/waitlist HTTP/1.1\r\nhost: x\r\ncontent-length: -5\r\n\r\n",
        400,
        "invalid_input",
        /Content-Length/
      ],
      [
        "headers over the limit",
        `GET /v1/tools HTTP/1.1\r\nhost: x\r\nx-big: ${"a".repeat(20_000)}\r\n\r\n`,
        413,
        "payload_too_large",
        /size limit/
      ],
      [
        "a path over the limit",
        `GET /v1/${"a".repeat(20_000)} HTTP/1.1\r\nhost: x\r\n\r\n`,
        413,
        "payload_too_large",
        /size limit/
      ]
    ]
    for (const [name, bytes, status, code, message] of cases) {
      it(`answers ${name} with ${status} ${code}`, async () => {
        const res = await sendRaw(bytes)
        expectError(res, status, code, message)
        expect(res.head).toMatch(/content-type: application\/json/i)
      })
    }
  })
}
