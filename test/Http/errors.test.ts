import { Effect, FiberRef, Schema } from "effect"
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { apiErrorClasses } from "../../src/Errors/ApiErrors.js"
import { codesBeyondSpec, errorCatalogue, errorCodes } from "../../src/Errors/ErrorCatalogue.js"
import { currentDocsBaseUrl, encodeApiError, wire } from "../../src/Errors/Wire.js"

/** The Errors table of the specification, read from the copy of the specification kept in docs/spec. */
const specErrors = () => {
  const spec = fs.readFileSync(new URL("../../docs/spec/interface-spec.md", import.meta.url), "utf8")
  const section = spec.slice(spec.indexOf("## Errors"), spec.indexOf("Client-side codes"))
  return Array.from(section.matchAll(/^\| ([a-z_]+) \| (\d{3}) \| (yes|no|-) \|/gm), (m) => ({
    code: m[1]!,
    status: Number(m[2]),
    retry: m[3]!
  }))
}

describe("error catalogue", () => {
  it("holds exactly the spec's codes with their status and retry flag", () => {
    const rows = specErrors()
    expect(rows.length).toBe(67)
    const ours = errorCodes.filter((code) => !codesBeyondSpec.includes(code))
    expect([...ours].sort()).toEqual(rows.map((r) => r.code).sort())
    for (const row of rows) {
      const entry = errorCatalogue[row.code as keyof typeof errorCatalogue]
      expect(entry.status, row.code).toBe(row.status)
      if (row.retry !== "-") expect(entry.retryable, row.code).toBe(row.retry === "yes")
    }
    expect(errorCatalogue.endpoint_unavailable.retryable).toBe(true)
  })

  it("has a TaggedError class per code whose tag is the code", () => {
    for (const code of errorCodes) {
      const ErrorClass = apiErrorClasses[code] as any
      expect(ErrorClass._tag).toBe(code)
      const instance = code === "approval_required"
        ? new ErrorClass({
          approval: {
            id: "a",
            status: "waiting",
            reason: "over_budget",
            tool_id: "t",
            item_count: 1,
            amount: { credits: "1", usd: "0.001" },
            expires_at: "2026-01-01T00:00:00.000Z"
          }
        })
        : new ErrorClass()
      expect(instance._tag).toBe(code)
      expect(instance.message).toBe(errorCatalogue[code].meaning)
    }
  })

  it("encodes to exactly {error:{code,message,doc_url,retryable}} and decodes back", async () => {
    const error = new apiErrorClasses.insufficient_credits({ message: "Balance 10 is below the price 25" })
    const encoded = await Effect.runPromise(
      Effect.locally(encodeApiError(error), currentDocsBaseUrl, "https://api.example.com")
    )
    expect(encoded).toEqual({
      status: 402,
      body: {
        error: {
          code: "insufficient_credits",
          message: "Balance 10 is below the price 25",
          doc_url: "https://api.example.com/docs/errors#insufficient_credits",
          retryable: false
        }
      }
    })
    const decoded = Schema.decodeUnknownSync(wire(apiErrorClasses.insufficient_credits))(encoded.body)
    expect(decoded).toBeInstanceOf(apiErrorClasses.insufficient_credits)
    expect(decoded.message).toBe("Balance 10 is below the price 25")
    expect(await Effect.runPromise(FiberRef.get(currentDocsBaseUrl))).toBe("")
  })
})
