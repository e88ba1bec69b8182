import { Context, Duration, Effect } from "effect"
import { promises as dns } from "node:dns"
import type { LookupAddress } from "node:dns"
import * as http from "node:http"
import * as https from "node:https"
import { type AddressPolicy, addressRefusal, bareHost, isIpLiteral } from "./AddressPolicy.js"

/**
 * The outgoing side of a webhook delivery: one POST, no redirects followed, bounded by the
 * spec's 10-second answer time, and never to a forbidden address. The address check runs
 * where the connection is made: the socket's DNS lookup is ours, it resolves the name,
 * refuses when any answer is forbidden, and hands the checked addresses to the connect, so a
 * name that changes its answer between the URL check and the delivery (DNS rebinding)
 * cannot reach an internal address. A literal address in the URL is checked directly.
 */

/** Name resolution, a Reference so tests can stand in for DNS. */
export class DnsResolver extends Context.Reference<DnsResolver>()("DnsResolver", {
  defaultValue: () => ({
    lookup: (hostname: string): Promise<ReadonlyArray<LookupAddress>> =>
      dns.lookup(hostname, { all: true, verbatim: true })
  })
}) {}

export const ANSWER_TIME = Duration.seconds(10)

export interface PostOutcome {
  /** A 2xx answer arrived in time. */
  readonly delivered: boolean
  readonly statusCode: number | null
  readonly error: string | null
}

class AddressRefused extends Error {
  readonly code = "EADDRNOTALLOWED"
}

// Connections are kept for reuse, but an idle one is closed after 4 s, before the usual
// 5-second keep-alive of servers, so a reused connection is rarely one the receiver dropped.
const agentOptions = { keepAlive: true, maxSockets: 64, scheduling: "lifo" as const, timeout: 4_000 }
const agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) }

/** A reused keep-alive connection the receiver had closed: the POST is sent again on a new one. */
const STALE_CONNECTION = Symbol("stale connection")

const describeError = (error: NodeJS.ErrnoException): string => {
  switch (error.code) {
    case "EADDRNOTALLOWED":
      return `Address not allowed: ${error.message}`
    case "ECONNREFUSED":
      return "Connection refused"
    case "ECONNRESET":
      return "Connection reset before an answer"
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "Host name could not be resolved"
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return "Host unreachable"
    default:
      return error.code !== undefined ? `${error.code}: ${error.message}` : error.message
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address?: any, family?: number) => void

/**
 * A socket's `lookup` that resolves through `resolver` and refuses (`EADDRNOTALLOWED`) when
 * any address the name resolves to is forbidden by `policy`: the check is made on the
 * addresses the connection then uses, so an answer that changes after an earlier check
 * (DNS rebinding) cannot reach an internal address.
 */
export const guardedLookup = (resolver: DnsResolver["Type"], policy: AddressPolicy) =>
(
  hostname: string,
  lookupOptions: { all?: boolean },
  callback: LookupCallback
) => {
  resolver.lookup(hostname).then(
    (addresses) => {
      if (addresses.length === 0) {
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }))
      }
      for (const candidate of addresses) {
        const refusal = addressRefusal(candidate.address, policy)
        if (refusal !== undefined) return callback(new AddressRefused(`${hostname} resolves to ${refusal}`))
      }
      if (lookupOptions.all) return callback(null, addresses)
      callback(null, addresses[0]!.address, addresses[0]!.family)
    },
    (error: NodeJS.ErrnoException) => callback(error)
  )
}

export const postWebhook = (options: {
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: string
  readonly policy: AddressPolicy
}): Effect.Effect<PostOutcome> =>
  Effect.gen(function*() {
    const resolver = yield* DnsResolver
    const target = new URL(options.url)
    const host = bareHost(target.hostname)
    if (isIpLiteral(host)) {
      const refusal = addressRefusal(host, options.policy)
      if (refusal !== undefined) return { delivered: false, statusCode: null, error: `Address not allowed: ${refusal}` }
    }
    const lookup = guardedLookup(resolver, options.policy)
    const secure = target.protocol === "https:"
    const send = (pooled: boolean) =>
      Effect.async<PostOutcome | typeof STALE_CONNECTION>((resume) => {
        const request = (secure ? https : http).request({
          protocol: target.protocol,
          hostname: host,
          port: target.port === "" ? undefined : Number(target.port),
          path: `${target.pathname}${target.search}`,
          method: "POST",
          agent: pooled ? (secure ? agents.https : agents.http) : false,
          lookup: lookup as any,
          headers: { ...options.headers, "Content-Length": String(Buffer.byteLength(options.body)) }
        })
        request.on("response", (response) => {
          const status = response.statusCode ?? 0
          // The answer's body is read and dropped; one that never ends loses its connection.
          const drain = setTimeout(() => request.destroy(), Duration.toMillis(ANSWER_TIME))
          drain.unref()
          response.once("close", () => clearTimeout(drain))
          response.resume()
          if (status >= 200 && status < 300) {
            return resume(Effect.succeed({ delivered: true, statusCode: status, error: null }))
          }
          const error = status >= 300 && status < 400
            ? `Redirect (${status}) not followed`
            : `Answered HTTP ${status}`
          resume(Effect.succeed({ delivered: false, statusCode: status, error }))
        })
        request.on("error", (error: NodeJS.ErrnoException) =>
          resume(Effect.succeed(
            pooled && request.reusedSocket && error.code === "ECONNRESET"
              ? STALE_CONNECTION
              : { delivered: false, statusCode: null, error: describeError(error) }
          )))
        request.end(options.body)
        return Effect.sync(() => request.destroy())
      })
    const first = yield* send(true)
    if (first !== STALE_CONNECTION) return first
    const second = yield* send(false)
    return second === STALE_CONNECTION ? { delivered: false, statusCode: null, error: "Connection reset" } : second
  }).pipe(
    Effect.timeout(ANSWER_TIME),
    Effect.catchTag("TimeoutException", () =>
      Effect.succeed<PostOutcome>({ delivered: false, statusCode: null, error: "No answer within 10 seconds" }))
  )
