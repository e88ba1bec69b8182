import { HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { type IpRange, parseAddress, parsedInAnyRange, parseRange } from "../Domain/IpRanges.js"
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
  const socketPeer = addressOf(peer ?? "unknown")
  if (trusted.length === 0 || !socketPeer.trusted(trusted) || !forwardedFor) return socketPeer.text
  const hops = forwardedFor.split(",").map((hop) => hop.trim()).filter((hop) => hop.length > 0).map(addressOf)
  for (let index = hops.length - 1; index >= 0; index--) {
    if (!hops[index]!.trusted(trusted)) return hops[index]!.text
  }
  return hops[0]?.text ?? socketPeer.text
}

/** An address parsed once: its canonical text (as given when it is not an address) and whether it is trusted. */
const addressOf = (text: string) => {
  const parsed = parseAddress(text)
  return {
    text: parsed?.toString() ?? text,
    trusted: (ranges: ReadonlyArray<IpRange>) => parsed !== undefined && parsedInAnyRange(parsed, ranges)
  }
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
