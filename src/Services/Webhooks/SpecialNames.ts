import { addressRefusal } from "./AddressPolicy.js"

/**
 * Host names a production webhook may not use, judged from the name alone before any
 * lookup: the special-use names that never reach the public internet (RFC 6761, 6762,
 * 7686, 8375 and the `internal` TLD), a trailing dot (`localhost.` is localhost), and names
 * that carry a non-public IPv4 address in their labels, as wildcard-DNS services answer
 * (`10.0.0.1.nip.io`, `10-0-0-1.sslip.io`, `0a000001.nip.io`).
 */
const specialSuffixes = [
  "localhost",
  "invalid",
  "local",
  "internal",
  "home.arpa",
  "test",
  "example",
  "onion",
  "lan",
  "intranet"
]

const embeddedAddresses = (name: string): Array<string> => {
  const found: Array<string> = []
  for (const match of name.matchAll(/(?:^|[.-])(\d{1,3})[.-](\d{1,3})[.-](\d{1,3})[.-](\d{1,3})(?=$|[.-])/g)) {
    found.push(match.slice(1, 5).join("."))
  }
  for (const label of name.split(".")) {
    if (/^[0-9a-f]{8}$/.test(label)) {
      const value = parseInt(label, 16)
      found.push([24, 16, 8, 0].map((shift) => (value >>> shift) & 255).join("."))
    }
  }
  return found
}

/** Why a name is refused in production without looking it up, or undefined. */
export const specialNameRefusal = (host: string): string | undefined => {
  if (host.endsWith(".")) return `${host} ends with a dot; write the name without it`
  const name = host.toLowerCase()
  for (const suffix of specialSuffixes) {
    if (name === suffix || name.endsWith(`.${suffix}`)) {
      return `${host} is a special-use name that is not on the public internet`
    }
  }
  for (const address of embeddedAddresses(name)) {
    const refusal = addressRefusal(address, { allowLoopback: false })
    if (refusal !== undefined && !refusal.includes("is not an IP address")) {
      return `${host} names the address ${address}, which is not public`
    }
  }
  return undefined
}
