import { describe, expect, it } from "vitest"
import { parseRange } from "../../src/Domain/IpRanges.js"
import { clientAddressOf } from "../../src/Http/ClientAddress.js"

const trusted = ["127.0.0.1", "10.0.0.0/8", "::1"].map((entry) => parseRange(entry)!)

describe("the client address of a request", () => {
  it("is the socket peer when the peer is not a trusted proxy, whatever it forwards", () => {
    expect(clientAddressOf("203.0.113.7", "198.51.100.1", trusted)).toBe("203.0.113.7")
    expect(clientAddressOf("::ffff:203.0.113.7", undefined, trusted)).toBe("203.0.113.7")
    expect(clientAddressOf("127.0.0.1", "198.51.100.1", [])).toBe("127.0.0.1")
  })

  it("is the nearest untrusted hop of X-Forwarded-For behind trusted proxies", () => {
    expect(clientAddressOf("127.0.0.1", "198.51.100.1, 203.0.113.9, 10.1.2.3", trusted)).toBe("203.0.113.9")
    expect(clientAddressOf("::ffff:127.0.0.1", " ::ffff:198.51.100.1 ", trusted)).toBe("198.51.100.1")
    expect(clientAddressOf("::1", "2001:db8::1", trusted)).toBe("2001:db8::1")
  })

  it("takes a hop that is not an address as it is, and the first hop when every hop is trusted", () => {
    expect(clientAddressOf("127.0.0.1", "198.51.100.1, not-an-address", trusted)).toBe("not-an-address")
    expect(clientAddressOf("127.0.0.1", "10.0.0.5, 10.0.0.6", trusted)).toBe("10.0.0.5")
    expect(clientAddressOf("127.0.0.1", " , ", trusted)).toBe("127.0.0.1")
    expect(clientAddressOf(undefined, undefined, trusted)).toBe("unknown")
  })
})
