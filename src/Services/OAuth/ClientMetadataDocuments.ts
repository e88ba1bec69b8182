import { Context, Data, Duration, Effect, Either } from "effect"
import type { IncomingHttpHeaders } from "node:http"
import * as https from "node:https"
import { type AddressPolicy, addressRefusal, bareHost, isIpLiteral } from "../Webhooks/AddressPolicy.js"
import { specialNameRefusal } from "../Webhooks/SpecialNames.js"
import { DnsResolver, guardedLookup } from "../Webhooks/WebhookHttp.js"

/**
 * Client ID metadata documents (an MCP client's `client_id` is an https URL naming its own
 * metadata): oidc-provider's `clientIdMetadataDocument` feature reads, validates and caches
 * them; this module is how it reaches them. Before a fetch, `documentRefusal` judges the
 * address as a webhook's is judged (https, a public address; loopback only outside
 * production; in production no special-use name), so the refusal can say why. The fetch
 * itself connects only to addresses the same rule allows, checked on the addresses the
 * socket uses (a name that changes its answer in between cannot reach an internal address),
 * follows no redirect, gives up after a few seconds and reads at most `DOCUMENT_MAX_BYTES`.
 */
export const DOCUMENT_MAX_BYTES = 5 * 1024
export const DOCUMENT_TIMEOUT = Duration.seconds(5)
/** How long a fetched document is used (its Cache-Control max-age, kept within these seconds). */
export const DOCUMENT_CACHE_SECONDS = { min: 30, max: 300 } as const

/** The certificates a document's server is checked against: Node's own, unless a test stands in its CA. */
export class ClientMetadataTrust extends Context.Reference<ClientMetadataTrust>()("OAuth/ClientMetadataTrust", {
  defaultValue: (): { readonly ca: string | undefined } => ({ ca: undefined })
}) {}

export class DocumentFetchFailed extends Data.TaggedError("DocumentFetchFailed")<{ readonly message: string }> {}

const failed = (message: string) => new DocumentFetchFailed({ message })

/** Why the document at `raw` may not be fetched, or undefined when it may. */
export const documentRefusal = (raw: string, options: { readonly isProduction: boolean }) =>
  Effect.gen(function*() {
    const policy: AddressPolicy = { allowLoopback: !options.isProduction }
    const url = URL.parse(raw)
    if (url === null || url.protocol !== "https:") return "the client_id must be an https URL"
    const host = bareHost(url.hostname)
    if (isIpLiteral(host)) return addressRefusal(host, policy)
    if (options.isProduction) {
      const refusal = specialNameRefusal(host)
      if (refusal !== undefined) return refusal
    }
    const resolver = yield* DnsResolver
    const addresses = yield* Effect.tryPromise(() => resolver.lookup(host)).pipe(
      Effect.timeout(DOCUMENT_TIMEOUT),
      Effect.orElseSucceed(() => [])
    )
    if (addresses.length === 0) return `${host} does not resolve`
    for (const { address } of addresses) {
      const refusal = addressRefusal(address, policy)
      if (refusal !== undefined) return `${host} resolves to ${refusal}`
    }
    return undefined
  })

const headersOf = (incoming: IncomingHttpHeaders) => {
  const headers = new Headers()
  for (const [name, value] of Object.entries(incoming)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value)
  }
  return headers
}

/** One GET of a document, as a fetch `Response` (the form the library reads). */
const getDocument = (
  raw: string,
  reach: { readonly policy: AddressPolicy; readonly resolver: DnsResolver["Type"]; readonly ca: string | undefined }
) =>
  Effect.gen(function*() {
    const { ca, policy, resolver } = reach
    const target = new URL(raw)
    if (target.protocol !== "https:") return yield* failed("the client_id must be an https URL")
    const host = bareHost(target.hostname)
    if (isIpLiteral(host)) {
      const refusal = addressRefusal(host, policy)
      if (refusal !== undefined) return yield* failed(`address not allowed: ${refusal}`)
    }
    return yield* Effect.async<Response, DocumentFetchFailed>((resume) => {
      const request = https.request({
        hostname: host,
        port: target.port === "" ? undefined : Number(target.port),
        path: `${target.pathname}${target.search}`,
        method: "GET",
        headers: { accept: "application/json" },
        agent: false,
        ca,
        lookup: guardedLookup(resolver, policy) as never
      })
      request.on("response", (response) => {
        const status = response.statusCode ?? 0
        const chunks: Array<Buffer> = []
        let size = 0
        response.on("data", (chunk: Buffer) => {
          size += chunk.length
          if (size > DOCUMENT_MAX_BYTES) {
            request.destroy()
            resume(Effect.fail(failed(`the document is larger than ${DOCUMENT_MAX_BYTES} bytes`)))
          } else {
            chunks.push(chunk)
          }
        })
        response.on("end", () => {
          const body = status === 204 || status === 304 ? null : Buffer.concat(chunks)
          resume(Effect.succeed(new Response(body, { status, headers: headersOf(response.headers) })))
        })
        response.on("error", (error) => resume(Effect.fail(failed(error.message))))
      })
      request.on("error", (error: NodeJS.ErrnoException) =>
        resume(
          Effect.fail(
            failed(error.code === "EADDRNOTALLOWED" ? `address not allowed: ${error.message}` : error.message)
          )
        ))
      request.end()
      return Effect.sync(() => request.destroy())
    }).pipe(
      Effect.timeout(DOCUMENT_TIMEOUT),
      Effect.catchTag("TimeoutException", () =>
        Effect.fail(failed(`no answer within ${Duration.format(DOCUMENT_TIMEOUT)}`)))
    )
  })

/**
 * The `fetch` the authorization server is given: documents only, through the address rule
 * above (the library's own special-use guard would also refuse a loopback document in
 * development). A failure rejects with an `Error` whose message the library keeps as the
 * refusal's detail.
 */
export const makeDocumentFetch = (options: { readonly isProduction: boolean }) =>
  Effect.gen(function*() {
    const reach = {
      policy: { allowLoopback: !options.isProduction },
      resolver: yield* DnsResolver,
      ca: (yield* ClientMetadataTrust).ca
    }
    return (url: string | URL | Request, init: RequestInit = {}): Promise<Response> =>
      Effect.runPromise(
        Effect.either(getDocument(url instanceof Request ? url.url : String(url), reach)),
        init.signal ? { signal: init.signal } : undefined
      )
        .then(Either.getOrThrowWith((error) => new Error(error.message)))
  })
