import fc from "fast-check"
import { randomUUID } from "node:crypto"
import * as http from "node:http"
import { beforeAll, describe, expect, it } from "vitest"
import { errorCatalogue, isErrorCode } from "../../../src/Errors/ErrorCatalogue.js"
import { seedAdmin } from "../../support/fixtures.js"
import { seedAgent, seedOrg } from "../../support/fixtures.js"
import { base, world } from "./world.js"

/**
 * Every operation of the OpenAPI document receives a generated set of malformed requests
 * (wrong types, missing and extra fields, huge and negative numbers, NUL and invalid UTF-8,
 * deep nesting, wrong and missing Content-Type, empty bodies, junk path and query values),
 * each sent with the credential its path needs so that it reaches the handler. No answer
 * may be a 500, and every error answer is the exact common body with the catalogue's status.
 */

let credentials: { session: string; orgKey: string; agentKey: string; admin: string }
let ids: { orgId: string; agentId: string; userId: string }

export const malformedRequestsCases = () => {
  beforeAll(async () => {
    const org = await seedOrg(world.db)
    const acting = await seedAgent(world.db, org.orgId)
    const target = await seedAgent(world.db, org.orgId, { name: "Target of path ids" })
    const admin = await seedAdmin(world.db)
    credentials = { session: org.owner.sessionToken, orgKey: "", agentKey: acting.key, admin: admin.token }
    ids = { orgId: org.orgId, agentId: target.agentId, userId: org.owner.userId }
  }, 60_000)

  interface Operation {
    readonly method: string
    readonly path: string
    readonly query: ReadonlyArray<string>
    readonly body:
      | { readonly properties: Record<string, { type?: string }>; readonly required: ReadonlyArray<string> }
      | undefined
  }

  /** The operations of the document, with their query names and body fields (refs resolved one level). */
  const operationsOf = (document: any): Array<Operation> => {
    const resolve = (schema: any): any => {
      if (schema?.$ref) return resolve(document.components.schemas[schema.$ref.split("/").pop()])
      if (schema?.allOf?.length === 1) return resolve(schema.allOf[0])
      return schema ?? {}
    }
    const operations: Array<Operation> = []
    for (const [path, methods] of Object.entries<any>(document.paths)) {
      for (const [method, operation] of Object.entries<any>(methods)) {
        const bodySchema = operation.requestBody?.content?.["application/json"]?.schema
        const resolved = bodySchema === undefined ? undefined : resolve(bodySchema)
        const properties: Record<string, { type?: string }> = {}
        for (const [name, schema] of Object.entries<any>(resolved?.properties ?? {})) properties[name] = resolve(schema)
        operations.push({
          method: method.toUpperCase(),
          path,
          query: (operation.parameters ?? []).filter((p: any) => p.in === "query").map((p: any) => p.name),
          body: resolved === undefined ? undefined : { properties, required: resolved.required ?? [] }
        })
      }
    }
    return operations
  }

  /** The credential a path needs; sign-out endpoints get none so the shared credentials live on. */
  const credentialFor = (operation: Operation): string | undefined => {
    const { path } = operation
    if (path === "/auth/logout" || path === "/admin/sign-out") return undefined
    if (path.startsWith("/admin/")) return credentials.admin
    if (path.startsWith("/v1/orgs") || path.startsWith("/v1/me") || path.startsWith("/auth/")) {
      return credentials.session
    }
    return credentials.agentKey
  }

  // ---- generators -------------------------------------------------------------------------

  const junkString = fc.oneof(
    fc.constant(""),
    fc.constant("\u0000"),
    fc.constant("a\u0000b"),
    fc.constant("x".repeat(10_000)),
    fc.constant("../../etc/passwd"),
    fc.constant("' OR 1=1 --"),
    fc.constant("\ud800"),
    fc.string({ maxLength: 40 }),
    fc.fullUnicodeString({ maxLength: 20 })
  )

  const junkNumber = fc.oneof(
    fc.constant(-1),
    fc.constant(0),
    fc.constant(-99999999999999999999),
    fc.constant(1e308),
    fc.constant(Number.MAX_SAFE_INTEGER + 2),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer()
  )

  /** A value of some other JSON type than the field's. */
  const wrongValueFor = (type: string | undefined): fc.Arbitrary<unknown> => {
    const others: Array<fc.Arbitrary<unknown>> = [
      fc.constant(null),
      fc.constant([]),
      fc.constant({}),
      fc.constant(true),
      fc.constant([1, "two", { three: null }])
    ]
    if (type !== "string") others.push(junkString)
    if (type !== "number" && type !== "integer") others.push(junkNumber)
    if (type === "string") {
      others.push(junkString, fc.constant("-1"), fc.constant("1e400"), fc.constant("99999999999999999999999"))
    }
    if (type === "number" || type === "integer") others.push(junkNumber)
    return fc.oneof(...others)
  }

  const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth)

  interface Generated {
    readonly kind: string
    readonly path: string
    readonly contentType: string | undefined
    readonly body: Buffer | undefined
  }

  const pathValue = fc.oneof(
    fc.constant("real"),
    fc.constant(randomUUID()),
    fc.constant("%00"),
    fc.constant("%zz"),
    fc.constant("99999999999999999999999"),
    fc.constant("-1"),
    fc.constant("x".repeat(2000)),
    fc.string({ minLength: 1, maxLength: 12 }).map(encodeURIComponent)
  )

  const queryValue = fc.oneof(
    fc.constant("%00"),
    fc.constant("%E0%A4"),
    fc.constant("-1"),
    fc.constant("1e400"),
    fc.constant("99999999999999999999999"),
    fc.constant(""),
    fc.constant("x".repeat(3000)),
    fc.string({ maxLength: 12 }).map(encodeURIComponent)
  )

  const generatorFor = (operation: Operation): fc.Arbitrary<Generated> => {
    const pathArb = fc
      .tuple(
        ...operation.path.split("/").map((segment) => {
          if (!segment.startsWith("{")) return fc.constant(segment)
          const real = segment === "{orgId}"
            ? ids.orgId
            : segment === "{agentId}"
            ? ids.agentId
            : segment === "{userId}"
            ? ids.userId
            : randomUUID()
          return pathValue.map((v) => (v === "real" ? real : v))
        })
      )
      .map((segments) => segments.join("/"))
    const queryArb = operation.query.length === 0
      ? fc.constant("")
      : fc
        .subarray([...operation.query, "unknown_param"], { minLength: 0 })
        .chain((names) => fc.tuple(...names.map((name) => queryValue.map((v) => `${name}=${v}`))))
        .map((pairs) => (pairs.length === 0 ? "" : `?${pairs.join("&")}`))
    const target = fc.tuple(pathArb, queryArb).map(([path, query]) => path + query)

    const fields = Object.entries(operation.body?.properties ?? {})
    const json = (kind: string, value: fc.Arbitrary<unknown>) =>
      fc.tuple(target, value).map(([path, v]): Generated => ({
        kind,
        path,
        contentType: "application/json",
        body: Buffer.from(JSON.stringify(v))
      }))
    const raw = (kind: string, contentType: string | undefined, body: fc.Arbitrary<Buffer | undefined>) =>
      fc.tuple(target, body).map(([path, b]): Generated => ({ kind, path, contentType, body: b }))

    const wrongField = fields.length === 0
      ? fc.constant({})
      : fc.constantFrom(...fields).chain(([name, schema]) => wrongValueFor(schema.type).map((v) => ({ [name]: v })))
    const someFieldsWrong = fc.record(
      Object.fromEntries(fields.map(([name, schema]) => [name, wrongValueFor(schema.type)])),
      { withDeletedKeys: true }
    )
    const bodyVariants: Array<fc.Arbitrary<Generated>> = [
      json("missing fields", fc.constant({})),
      json("wrong type", wrongField),
      json("several wrong", someFieldsWrong),
      json("extra fields", someFieldsWrong.map((v) => ({ ...v, unexpected_field: "x", __proto__x: { a: 1 } }))),
      json("not an object", fc.oneof(fc.constant([]), fc.constant("text"), fc.constant(42), fc.constant(null))),
      raw(
        "NUL in a string",
        "application/json",
        fc.constant(Buffer.from("{\"name\":\"a\\u0000b\",\"email\":\"x\\u0000@y.z\"}"))
      ),
      raw(
        "invalid UTF-8",
        "application/json",
        fc.constant(Buffer.concat([Buffer.from("{\"name\":\""), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from("\"}")]))
      ),
      raw(
        "deep nesting",
        "application/json",
        fc.constantFrom(64, 65, 500, 5000).map((d) => Buffer.from(`{"a":${nested(d)}}`))
      ),
      raw(
        "huge number",
        "application/json",
        fc.constantFrom("1e999", "-1e999", "123456789012345678901234567890").map((n) =>
          Buffer.from(`{"amount_usd":${n},"credits":${n}}`)
        )
      ),
      raw(
        "malformed JSON",
        "application/json",
        fc.constantFrom("{", "{\"a\":}", "nul", "[1,]", "\"unterminated").map((t) => Buffer.from(t))
      ),
      raw("empty body", "application/json", fc.constant(Buffer.alloc(0))),
      raw("wrong Content-Type", undefined, fc.constant(undefined)).chain((g) =>
        fc.constantFrom(
          "text/plain",
          "multipart/form-data; boundary=x",
          "application/x-www-form-urlencoded",
          "application/xml"
        ).map((contentType) => ({
          ...g,
          kind: "wrong Content-Type",
          contentType,
          body: Buffer.from("{\"email\":\"a@example.com\"}")
        }))
      ),
      raw("missing Content-Type", undefined, fc.constant(Buffer.from("{}")))
    ]
    const withoutBody = [raw("junk target", undefined, fc.constant(undefined))]
    return fc.oneof(...withoutBody, ...(operation.method === "GET" ? [] : bodyVariants))
  }

  // ---- sending ----------------------------------------------------------------------------

  const send = (operation: Operation, generated: Generated, token: string | undefined) =>
    new Promise<{ status: number; text: string; contentType: string | undefined }>((resolve, reject) => {
      const headers: Record<string, string | number> = {}
      if (token !== undefined) headers["authorization"] = `Bearer ${token}`
      if (generated.contentType !== undefined) headers["content-type"] = generated.contentType
      if (generated.body !== undefined) headers["content-length"] = generated.body.length
      const req = http.request(
        {
          host: "127.0.0.1",
          port: Number(new URL(world.server.url).port),
          method: operation.method,
          path: generated.path,
          headers
        },
        (res) => {
          const chunks: Array<Buffer> = []
          res.on("data", (chunk: Buffer) => chunks.push(chunk))
          res.on(
            "end",
            () =>
              resolve({
                status: res.statusCode ?? 0,
                text: Buffer.concat(chunks).toString("utf8"),
                contentType: res.headers["content-type"]
              })
          )
        }
      )
      req.on("error", reject)
      req.end(generated.body)
    })

  /** Codes the spec gives a second status beside the catalogue's. */
  const otherStatuses: Record<string, ReadonlyArray<number>> = { plan_limit: [429] }

  const problemWith = (answer: { status: number; text: string }): string | undefined => {
    if (answer.status >= 500 && answer.status !== 501 && answer.status !== 502 && answer.status !== 503) {
      return `status ${answer.status}`
    }
    if (answer.status < 400) return undefined
    let body: any
    try {
      body = JSON.parse(answer.text)
    } catch {
      return `non-JSON error body: ${answer.text.slice(0, 80)}`
    }
    const error = body?.error
    if (typeof error !== "object" || error === null) return "no error object"
    if (Object.keys(error).sort().join() !== "code,doc_url,message,retryable") return `error keys ${Object.keys(error)}`
    const code: unknown = error.code
    if (!isErrorCode(code)) return `unknown code ${String(code)}`
    const entry = errorCatalogue[code]
    if (entry.status !== answer.status && !(otherStatuses[code] ?? []).includes(answer.status)) {
      return `${code} with status ${answer.status}`
    }
    if (code === "internal_error") return "internal_error"
    if (typeof error.message !== "string" || error.message.length === 0) return "empty message"
    if (error.doc_url !== `${base}/docs/errors#${code}`) return `doc_url ${error.doc_url}`
    if (error.retryable !== entry.retryable) return `retryable ${error.retryable}`
    return undefined
  }

  const REQUESTS_PER_OPERATION = 24

  describe("malformed requests to every operation", () => {
    it("never answer 500 and always carry the exact error body", async () => {
      const document = await (await fetch(`${world.server.url}/openapi.json`)).json()
      const operations = operationsOf(document)
      expect(operations.length).toBeGreaterThan(80)
      const statuses: Record<number, number> = {}
      const problems: Array<string> = []
      let sent = 0
      for (const [index, operation] of operations.entries()) {
        const samples = fc.sample(generatorFor(operation), { numRuns: REQUESTS_PER_OPERATION, seed: 1000 + index })
        for (const generated of samples) {
          const answer = await send(operation, generated, credentialFor(operation))
          sent++
          statuses[answer.status] = (statuses[answer.status] ?? 0) + 1
          const problem = problemWith(answer)
          if (problem !== undefined) {
            problems.push(`${operation.method} ${generated.path.slice(0, 120)} [${generated.kind}]: ${problem}`)
          }
        }
      }
      console.info(
        `malformed requests: ${sent} sent to ${operations.length} operations; statuses ${JSON.stringify(statuses)}`
      )
      expect(problems).toEqual([])
      // The bad input is seen as such: most answers are 400 invalid_input.
      expect(statuses[400] ?? 0).toBeGreaterThan(sent / 3)
    }, 600_000)
  })
}
