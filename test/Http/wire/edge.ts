import { describe, expect, it } from "vitest"
import { type RawRequest, rawRequest } from "../../support/server.js"
import { base, world } from "./world.js"

const raw = (options: RawRequest) => rawRequest(world.server.url, options)

const errorBody = (code: string, message: string, retryable = false) => ({
  error: { code, message, doc_url: `${base}/docs/errors#${code}`, retryable }
})

export const edgeCases = () => {
  describe("built-in failures take the common error body", () => {
    it("answers an unknown path with 404 not_found", async () => {
      const res = await raw({ method: "GET", path: "/v1/nothing-here" })
      expect(res.status).toBe(404)
      expect(JSON.parse(res.body)).toEqual(errorBody("not_found", "No such path: /v1/nothing-here"))
    })

    it("answers a known path with another method with 405 and Allow", async () => {
      const res = await raw({ method: "DELETE", path: "/v1/tools" })
      expect(res.status).toBe(405)
      expect(res.headers["allow"]).toBe("GET")
      expect(JSON.parse(res.body)).toEqual(errorBody("method_not_allowed", "DELETE is not supported on /v1/tools"))
    })

    it("answers malformed JSON with 400 invalid_input", async () => {
      const res = await raw({
        method: "POST",
        path: "/v1/waitlist",
        headers: { "content-type": "application/json" },
        chunks: ["{\"email\": "]
      })
      expect(res.status).toBe(400)
      const body = JSON.parse(res.body)
      expect(body.error.code).toBe("invalid_input")
      expect(body.error.message).toMatch(/^Malformed JSON body/)
      expect(Object.keys(body.error).sort()).toEqual(["code", "doc_url", "message", "retryable"])
    })

    it("answers a schema violation with 400 invalid_input naming the field", async () => {
      const res = await raw({
        method: "POST",
        path: "/v1/waitlist",
        headers: { "content-type": "application/json" },
        chunks: [JSON.stringify({ mail: "x@example.com" })]
      })
      expect(res.status).toBe(400)
      expect(JSON.parse(res.body).error.message).toContain("`email`")
    })

    it("answers a body over 1 MB with 413, with Content-Length", async () => {
      const big = JSON.stringify({ email: "a".repeat(1024 * 1024) + "@example.com" })
      const res = await raw({
        method: "POST",
        path: "/v1/waitlist",
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(big) },
        chunks: [big]
      })
      expect(res.status).toBe(413)
      expect(JSON.parse(res.body)).toEqual(errorBody("payload_too_large", "Request body is over 1 MB"))
    })

    it("answers a chunked body over 1 MB with 413, without Content-Length", async () => {
      const chunk = "a".repeat(64 * 1024)
      const chunks = ["{\"email\":\"", ...Array.from({ length: 17 }, () => chunk), "@example.com\"}"]
      const res = await raw({
        method: "POST",
        path: "/v1/waitlist",
        headers: { "content-type": "application/json", "transfer-encoding": "chunked" },
        chunks
      })
      expect(res.status).toBe(413)
      expect(JSON.parse(res.body).error.code).toBe("payload_too_large")
    })

    it("answers a defect with 500 internal_error, no stack trace on the wire", async () => {
      await world.db.query("ALTER TABLE tool_benchmarks RENAME TO tool_benchmarks_gone")
      try {
        const res = await raw({ method: "GET", path: "/v1/tools" })
        expect(res.status).toBe(500)
        const body = JSON.parse(res.body)
        expect(body).toEqual(errorBody("internal_error", "Something went wrong on our side; it has been logged", true))
        expect(res.body).not.toMatch(/tool_benchmarks|at .*\.ts|SqlError/)
      } finally {
        await world.db.query("ALTER TABLE tool_benchmarks_gone RENAME TO tool_benchmarks")
      }
    })
  })
}
