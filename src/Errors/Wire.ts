import { HttpApiSchema } from "@effect/platform"
import { Effect, FiberRef, ParseResult, Schema } from "effect"
import type { AnyApiError, ApiErrorClass } from "./ApiErrors.js"
import { errorCatalogue, type ErrorCode, isErrorCode } from "./ErrorCatalogue.js"

/**
 * The wire shape of every error: `{error:{code,message,doc_url,retryable}}` (plus, for a
 * few codes, fields beside `error`). Each error class is exposed to the HttpApi through a
 * transform whose encoded side is that body and which carries the code's HTTP status, so
 * OpenAPI shows the real body and the typed client decodes it back into the class.
 */

/** Public base address used for `doc_url`; the HTTP layer sets it for each request. */
export const currentDocsBaseUrl = FiberRef.unsafeMake("")

export const docUrlFor = (baseUrl: string, code: ErrorCode): string => `${baseUrl}/docs/errors#${code}`

const errorObject = (code: ErrorCode) =>
  Schema.Struct({
    code: Schema.Literal(code),
    message: Schema.String,
    doc_url: Schema.String,
    retryable: Schema.Boolean
  })

const wireCache = new Map<string, Schema.Schema.Any>()

/** The HttpApi-facing schema of an error class: instance <-> `{error:{...}}` with its status. */
export const wire = <C extends ApiErrorClass>(
  errorClass: C
): Schema.Schema<InstanceType<C>, { readonly error: WireErrorObject }> => {
  const code = errorClass._tag as ErrorCode
  const entry = errorCatalogue[code]
  const own = errorClass as { readonly httpStatus?: number; readonly httpDescription?: string }
  const status = own.httpStatus ?? entry.status
  const cacheKey = `${code}:${status}`
  const cached = wireCache.get(cacheKey)
  if (cached) return cached as any
  const { _tag: _t, message: _m, ...extraFields } = errorClass.fields as Schema.Struct.Fields
  const extraKeys = Object.keys(extraFields)
  const pickExtras = (source: Record<string, unknown>) => {
    const out: Record<string, unknown> = {}
    for (const key of extraKeys) out[key] = source[key]
    return out
  }
  const schema = Schema.transformOrFail(
    Schema.Struct({ error: errorObject(code), ...extraFields }),
    errorClass as unknown as Schema.Schema<any, any>,
    {
      strict: false,
      decode: (body: any) => ParseResult.succeed({ _tag: code, message: body.error.message, ...pickExtras(body) }),
      encode: (encoded: any) =>
        Effect.map(FiberRef.get(currentDocsBaseUrl), (baseUrl) => ({
          error: {
            code,
            message: encoded.message ?? entry.meaning,
            doc_url: docUrlFor(baseUrl, code),
            retryable: entry.retryable
          },
          ...pickExtras(encoded)
        }))
    }
  ).annotations({
    ...HttpApiSchema.annotations({ status }),
    identifier: status === entry.status ? `Error_${code}` : `Error_${code}_${status}`,
    description: own.httpDescription ?? entry.meaning
  })
  wireCache.set(cacheKey, schema)
  return schema as any
}

export interface WireErrorObject {
  readonly code: ErrorCode
  readonly message: string
  readonly doc_url: string
  readonly retryable: boolean
}

/** Recognises our own error instances among arbitrary failures. */
export const isApiError = (value: unknown): value is AnyApiError =>
  typeof value === "object" && value !== null && isErrorCode((value as { _tag?: unknown })._tag)

/** Encodes any of our errors to its status and body (reads the docs base from the fiber). */
export const encodeApiError = (error: AnyApiError) => {
  // The instance's own class: a code with a second status has a class of its own.
  const errorClass = error.constructor as ApiErrorClass & { readonly httpStatus?: number }
  return Effect.map(
    Schema.encode(wire(errorClass))(error as never).pipe(Effect.orDie),
    (body) => ({ status: errorClass.httpStatus ?? errorCatalogue[error._tag].status, body })
  )
}

/** A body for a code the HTTP layer produces itself (404 route, 405, 413, 500...). */
export const wireBody = (baseUrl: string, code: ErrorCode, message?: string) => ({
  error: {
    code,
    message: message ?? errorCatalogue[code].meaning,
    doc_url: docUrlFor(baseUrl, code),
    retryable: errorCatalogue[code].retryable
  }
})
