import { Effect } from "effect"
import { InvalidInput } from "../../Errors/ApiErrors.js"
import { type AddressPolicy, addressRefusal, bareHost, isIpLiteral } from "./AddressPolicy.js"
import { specialNameRefusal } from "./SpecialNames.js"
import { DnsResolver } from "./WebhookHttp.js"

/**
 * The rules for a webhook URL when it is saved. In production only `https` to public
 * addresses; otherwise also `http` (or `https`) to localhost and loopback, for a local
 * receiver. Every address the host resolves to must be allowed (the same check runs again
 * at every delivery, on the address actually connected to); plain http needs a host that
 * resolves to loopback only. In production the name must also be one that can reach the
 * public internet (see SpecialNames.ts) and must resolve now.
 */
export const MAX_URL_LENGTH = 2048

const invalid = (message: string) => new InvalidInput({ message })

export const checkWebhookUrl = (raw: string, options: { readonly isProduction: boolean }) =>
  Effect.gen(function*() {
    const policy: AddressPolicy = { allowLoopback: !options.isProduction }
    if (raw.length > MAX_URL_LENGTH) return yield* invalid(`url must be at most ${MAX_URL_LENGTH} characters`)
    const url = yield* Effect.try({ try: () => new URL(raw), catch: () => invalid("url is not a valid absolute URL") })
    if (url.protocol !== "https:" && url.protocol !== "http:") return yield* invalid("url must use https")
    if (options.isProduction && url.protocol !== "https:") return yield* invalid("url must use https")
    if (url.username !== "" || url.password !== "") return yield* invalid("url must not carry a user name or password")
    const host = bareHost(url.hostname)
    if (host === "") return yield* invalid("url has no host")
    let addresses: ReadonlyArray<string>
    if (isIpLiteral(host)) {
      addresses = [host]
    } else {
      if (options.isProduction) {
        const refusal = specialNameRefusal(host)
        if (refusal !== undefined) return yield* invalid(`url must reach a public address: ${refusal}`)
      }
      // Outside production a name that does not resolve now is accepted (its deliveries
      // fail until it does); the connect-time check refuses it later should it resolve to a
      // forbidden address.
      const resolver = yield* DnsResolver
      const resolved = yield* Effect.tryPromise(() => resolver.lookup(host)).pipe(
        Effect.timeout("5 seconds"),
        Effect.orElseSucceed(() => [])
      )
      addresses = resolved.map((entry) => entry.address)
      if (options.isProduction && addresses.length === 0) {
        return yield* invalid(`url must reach a public address: ${host} does not resolve`)
      }
    }
    for (const address of addresses) {
      const refusal = addressRefusal(address, policy)
      if (refusal !== undefined) {
        return yield* invalid(
          options.isProduction
            ? `url must reach a public address: ${refusal}`
            : `url must reach a public address or loopback: ${refusal}`
        )
      }
    }
    const loopbackOnly = addresses.length > 0 &&
      addresses.every((address) => addressRefusal(address, { allowLoopback: false }) !== undefined)
    if (url.protocol === "http:" && !loopbackOnly) {
      return yield* invalid("url must use https (plain http is allowed only for localhost in a local deployment)")
    }
    url.hash = ""
    return url.toString()
  })
