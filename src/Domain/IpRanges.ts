import ipaddr from "ipaddr.js"

/**
 * Addresses and CIDR ranges (IPv4 and IPv6). IPv4-mapped IPv6 addresses
 * (`::ffff:10.0.0.1`) are compared as the IPv4 address they carry, so an allowlist entry
 * written either way matches a client seen either way.
 */
export type IpRange = readonly [ipaddr.IPv4 | ipaddr.IPv6, number]

const normalize = (address: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 =>
  address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress()
    ? (address as ipaddr.IPv6).toIPv4Address()
    : address

/** Parses an address or a range; undefined when the entry is neither. */
export const parseRange = (entry: string): IpRange | undefined => {
  const text = entry.trim()
  try {
    if (text.includes("/")) {
      const [address, bits] = ipaddr.parseCIDR(text)
      if (address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
        return [(address as ipaddr.IPv6).toIPv4Address(), bits - 96]
      }
      return [address, bits]
    }
    if (!ipaddr.isValid(text)) return undefined
    const address = normalize(ipaddr.parse(text))
    return [address, address.kind() === "ipv4" ? 32 : 128]
  } catch {
    return undefined
  }
}

/** Parses a single address (not a range); undefined when invalid. */
export const parseAddress = (text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined => {
  // One parse (`isValid` is a parse of its own): every request's client address comes here.
  try {
    return normalize(ipaddr.parse(text.trim()))
  } catch {
    return undefined
  }
}

export const inRange = (address: ipaddr.IPv4 | ipaddr.IPv6, range: IpRange): boolean =>
  address.kind() === range[0].kind() && address.match(range as [ipaddr.IPv4, number])

export const inAnyRange = (address: string, ranges: ReadonlyArray<IpRange>): boolean => {
  const parsed = parseAddress(address)
  return parsed !== undefined && parsedInAnyRange(parsed, ranges)
}

export const parsedInAnyRange = (address: ipaddr.IPv4 | ipaddr.IPv6, ranges: ReadonlyArray<IpRange>): boolean =>
  ranges.some((range) => inRange(address, range))
