import ipaddr from "ipaddr.js"

/**
 * Which addresses a webhook may reach. Only global unicast addresses are public: private
 * (10/8, 172.16/12, 192.168/16), loopback, unspecified (0/8, ::), link-local (169.254/16,
 * fe80::/10), carrier-grade NAT (100.64/10), benchmarking (198.18/15), reserved (240/4,
 * documentation), multicast, broadcast, unique-local (fc00::/7) and the IPv6 forms that
 * embed or translate to IPv4 (6to4, Teredo, NAT64) are refused. An IPv4-mapped IPv6
 * address is judged as the IPv4 address it carries. Loopback is allowed only outside
 * production (a local deployment talking to a local receiver).
 */
export interface AddressPolicy {
  readonly allowLoopback: boolean
}

export const policyFor = (isProduction: boolean): AddressPolicy => ({ allowLoopback: !isProduction })

/** Why an address is refused, or undefined when it may be reached. */
export const addressRefusal = (text: string, policy: AddressPolicy): string | undefined => {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text
  if (!ipaddr.isValid(bare)) return `${text} is not an IP address`
  let address = ipaddr.parse(bare)
  if (address.kind() === "ipv6") {
    const v6 = address as ipaddr.IPv6
    if (v6.range() === "ipv4Mapped") address = v6.toIPv4Address()
  }
  const range = address.range()
  if (range === "unicast") return undefined
  if (range === "loopback" && policy.allowLoopback) return undefined
  return `${address.toString()} is not a public address (${range})`
}

export const isIpLiteral = (host: string): boolean => {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host
  return ipaddr.isValid(bare)
}

export const bareHost = (
  host: string
): string => (host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host)
