import { HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { canonicalAddress, inAnyRange, type IpRange, parseRange } from "../Domain/IpRanges.js"
import { AppConfig } from "../Services/AppConfig.js"

/**
 * The address a request comes from: the socket peer, unless that peer is one of
 * TRUSTED_PROXIES, in which case the nearest untrusted entry of X-Forwarded-For.
 */
export const clientAddressOf = (
  peer: string | undefined,
  forwardedFor: string | undefined,
  trusted: ReadonlyArray<IpRange>
): string => {
  const socketPeer = canonicalAddress(peer ?? "unknown")
  if (trusted.length === 0 || !inAnyRange(socketPeer, trusted) || !forwardedFor) return socketPeer
  const hops = forwardedFor.split(",").map((hop) => canonicalAddress(hop.trim())).filter((hop) => hop.length > 0)
  for (let index = hops.length - 1; index >= 0; index--) {
    if (!inAnyRange(hops[index]!, trusted)) return hops[index]!
  }
  return hops[0] ?? socketPeer
}

export class ClientAddress extends Effect.Service<ClientAddress>()("Http/ClientAddress", {
  effect: Effect.gen(function*() {
    const config = yield* AppConfig
    const trusted = config.trustedProxies.flatMap((entry) => {
      const range = parseRange(entry)
      return range ? [range] : []
    })
    /** The client address of the current request. */
    const current = Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
      clientAddressOf(
        Option.getOrUndefined(request.remoteAddress),
        request.headers["x-forwarded-for"],
        trusted
      ))
    return { current } as const
  })
}) {}
