import { describe, expect, it } from "vitest"
import { expectError, makeAgent, owner } from "../../support/people.js"
import { request } from "../../support/server.js"
import { call, eventually } from "../../support/world.js"
import { untrusting as plain, world } from "./world.js"

/**
 * Agent allowlists: checked as soon as the key is found, on the request's address (the
 * socket peer; X-Forwarded-For only from TRUSTED_PROXIES, here 127.0.0.1).
 */

const fenced = async (ip_allowlist: Array<string>) => {
  const boss = await owner(world)
  return { boss, ...(await makeAgent(world, boss.token, boss.orgId, { ip_allowlist })) }
}

export const allowlistCases = () => {
  describe("IP allowlists", () => {
    it("lets in listed IPv4 and IPv6 addresses and ranges, and refuses others with 403 ip_not_allowed", async () => {
      const { key } = await fenced(["203.0.113.0/24", "198.51.100.7", "2001:db8:1::/48", "2001:db8:ffff::1"])
      const from = (ip: string) => call(world, "GET", "/v1/agent", { token: key, ip })
      for (
        const ip of [
          "203.0.113.1",
          "203.0.113.254",
          "198.51.100.7",
          "2001:db8:1::1",
          "2001:db8:1:ffff::9",
          "2001:db8:ffff::1"
        ]
      ) {
        expect((await from(ip)).status, ip).toBe(200)
      }
      for (const ip of ["203.0.114.1", "198.51.100.8", "2001:db8:2::1", "2001:db8:ffff::2", "10.0.0.1"]) {
        const res = await from(ip)
        expectError(res, 403, "ip_not_allowed")
        expect(res.json.error.message).toContain(ip)
      }
    })

    it("treats IPv4-mapped IPv6 as the IPv4 address it carries, both in the list and on the wire", async () => {
      const mappedEntry = await fenced(["::ffff:192.0.2.0/120"])
      expect((await call(world, "GET", "/v1/agent", { token: mappedEntry.key, ip: "192.0.2.44" })).status).toBe(200)
      expectError(
        await call(world, "GET", "/v1/agent", { token: mappedEntry.key, ip: "192.0.3.1" }),
        403,
        "ip_not_allowed"
      )
      const plainEntry = await fenced(["192.0.2.0/24"])
      expect((await call(world, "GET", "/v1/agent", { token: plainEntry.key, ip: "::ffff:192.0.2.9" })).status).toBe(
        200
      )
    })

    it("an empty list means any address; [] clears a list", async () => {
      const { boss, id, key } = await fenced(["192.0.2.1"])
      expectError(await call(world, "GET", "/v1/agent", { token: key, ip: "198.18.0.1" }), 403, "ip_not_allowed")
      await call(world, "PATCH", `/v1/orgs/${boss.orgId}/agents/${id}`, {
        token: boss.token,
        body: { ip_allowlist: [] }
      })
      expect((await call(world, "GET", "/v1/agent", { token: key, ip: "198.18.0.1" })).status).toBe(200)
    })

    it("is checked before the endpoint acts: a refused request records no use of the key", async () => {
      const { id, key } = await fenced(["192.0.2.1"])
      expectError(
        await call(world, "POST", "/v1/call", { token: key, ip: "198.18.9.9", body: { endpoint: "x" } }),
        403,
        "ip_not_allowed"
      )
      // An allowed use is recorded (in the background, after the refused one's, had it been):
      // once it has landed, it is the only address the key was used from.
      expect((await call(world, "GET", "/v1/agent", { token: key, ip: "192.0.2.1" })).status).toBe(200)
      const addresses = () => world.db.query("SELECT address FROM agent_key_addresses WHERE agent_id = $1", [id])
      await eventually(async () => (await addresses()).length > 0, { what: "the allowed use's record" })
      expect(await addresses()).toEqual([{ address: "192.0.2.1" }])
    })

    it("org keys and sessions have no allowlist", async () => {
      const { boss } = await fenced(["192.0.2.1"])
      expect(
        (await call(world, "GET", `/v1/orgs/${boss.orgId}/agents`, { token: boss.token, ip: "198.18.7.7" })).status
      )
        .toBe(200)
    })
  })

  describe("without a trusted proxy", () => {
    it("believes only the socket peer: X-Forwarded-For cannot put a caller on the list", async () => {
      const { key } = await fenced(["203.0.113.5"])
      const spoofed = await request(`${plain.url}/v1/agent`, {
        headers: { authorization: `Bearer ${key}`, "x-forwarded-for": "203.0.113.5" }
      })
      expectError(spoofed, 403, "ip_not_allowed")
      expect(spoofed.json.error.message).toContain("127.0.0.1")
      const loopback = await fenced(["127.0.0.0/8", "::1"])
      expect((await request(`${plain.url}/v1/agent`, { headers: { authorization: `Bearer ${loopback.key}` } })).status)
        .toBe(200)
    })
  })
}
