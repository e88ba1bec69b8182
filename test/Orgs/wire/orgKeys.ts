import { describe, expect, it } from "vitest"
import { sha256Hex } from "../../../src/Services/SecretBox/Hashes.js"
import { eventually } from "../../support/eventually.js"
import { expectError, joinAs, makeOrgKey, owner } from "../../support/people.js"
import { call } from "../../support/world.js"
import { world } from "./world.js"

/** Org keys on the wire: who makes, lists and revokes them, what they reach, and their limit. */
export const orgKeysCases = () => {
  describe("org keys", () => {
    it("a signed-in owner makes one: the ok_ secret is shown once, only its hash is stored", async () => {
      const boss = await owner(world)
      const res = await call(world, "POST", `/v1/orgs/${boss.orgId}/keys`, {
        token: boss.token,
        body: { name: "CI", scope: "write" }
      })
      expect(res.status).toBe(201)
      expect(Object.keys(res.json).sort()).toEqual(["key", "note", "secret"])
      const { key, secret } = res.json
      expect(secret).toMatch(/^ok_[0-9A-Za-z]{43}$/)
      expect(key).toEqual({
        id: key.id,
        name: "CI",
        scope: "write",
        prefix: secret.slice(0, 10),
        created_by_email: boss.email,
        created_at: key.created_at,
        last_used_at: null
      })
      const [row] = await world.db.query("SELECT key_hash FROM org_keys WHERE id = $1", [key.id])
      expect(row.key_hash).toBe(sha256Hex(secret))
      const listed = await call(world, "GET", `/v1/orgs/${boss.orgId}/keys`, { token: boss.token })
      expect(listed.json).toEqual({ keys: [key] })
      expect(listed.text).not.toContain(secret)
    })

    it("members may list but not make or revoke keys (403 Only an org owner can do this)", async () => {
      const boss = await owner(world)
      const member = await joinAs(world, boss.token, boss.orgId)
      const key = await makeOrgKey(world, boss.token, boss.orgId, "read")
      expect((await call(world, "GET", `/v1/orgs/${boss.orgId}/keys`, { token: member.token })).json.keys).toHaveLength(
        1
      )
      expectError(
        await call(world, "POST", `/v1/orgs/${boss.orgId}/keys`, {
          token: member.token,
          body: { name: "x", scope: "read" }
        }),
        403,
        "forbidden",
        "Only an org owner can do this"
      )
      expectError(
        await call(world, "DELETE", `/v1/orgs/${boss.orgId}/keys/${key.id}`, { token: member.token }),
        403,
        "forbidden",
        "Only an org owner can do this"
      )
    })

    it("org keys can never reach /keys, even an owner's write key (403 forbidden)", async () => {
      const boss = await owner(world)
      const write = await makeOrgKey(world, boss.token, boss.orgId, "write")
      expectError(await call(world, "GET", `/v1/orgs/${boss.orgId}/keys`, { token: write.secret }), 403, "forbidden")
      expectError(
        await call(world, "POST", `/v1/orgs/${boss.orgId}/keys`, {
          token: write.secret,
          body: { name: "x", scope: "write" }
        }),
        403,
        "forbidden"
      )
      expectError(
        await call(world, "DELETE", `/v1/orgs/${boss.orgId}/keys/${write.id}`, { token: write.secret }),
        403,
        "forbidden"
      )
    })

    it("read keys send only GET (403 This org key is read-only); keys work only in their own org", async () => {
      const boss = await owner(world)
      const elsewhere = await owner(world, "Elsewhere")
      const read = await makeOrgKey(world, boss.token, boss.orgId, "read")
      expect((await call(world, "GET", `/v1/orgs/${boss.orgId}/members`, { token: read.secret })).status).toBe(200)
      expectError(
        await call(world, "POST", `/v1/orgs/${boss.orgId}/agents`, { token: read.secret, body: { name: "x" } }),
        403,
        "forbidden",
        "This org key is read-only"
      )
      expectError(
        await call(world, "GET", `/v1/orgs/${elsewhere.orgId}/members`, { token: read.secret }),
        403,
        "forbidden"
      )
      expectError(await call(world, "GET", "/v1/me", { token: read.secret }), 403, "forbidden")
      expectError(await call(world, "GET", "/v1/agent", { token: read.secret }), 403, "forbidden")
    })

    it("revoking: {status: revoked}, later use 401 Unknown or revoked org key, again 404 not_found", async () => {
      const boss = await owner(world)
      const key = await makeOrgKey(world, boss.token, boss.orgId, "write")
      const revoked = await call(world, "DELETE", `/v1/orgs/${boss.orgId}/keys/${key.id}`, { token: boss.token })
      expect(revoked.status).toBe(200)
      expect(revoked.json).toEqual({ status: "revoked" })
      expectError(
        await call(world, "GET", `/v1/orgs/${boss.orgId}/members`, { token: key.secret }),
        401,
        "unauthenticated",
        "Unknown or revoked org key"
      )
      expectError(
        await call(world, "GET", `/v1/orgs/${boss.orgId}/keys`, { token: key.secret }),
        401,
        "unauthenticated",
        "Unknown or revoked org key"
      )
      expectError(
        await call(world, "DELETE", `/v1/orgs/${boss.orgId}/keys/${key.id}`, { token: boss.token }),
        404,
        "not_found"
      )
      expectError(
        await call(world, "DELETE", `/v1/orgs/${boss.orgId}/keys/00000000-0000-4000-8000-000000000000`, {
          token: boss.token
        }),
        404,
        "not_found"
      )
      expectError(
        await call(world, "DELETE", `/v1/orgs/${boss.orgId}/keys/nope`, { token: boss.token }),
        404,
        "not_found"
      )
      expect((await call(world, "GET", `/v1/orgs/${boss.orgId}/keys`, { token: boss.token })).json.keys).toEqual([])
    })

    it("another org's key id cannot be revoked from here (404)", async () => {
      const a = await owner(world)
      const b = await owner(world)
      const key = await makeOrgKey(world, a.token, a.orgId, "read")
      expectError(
        await call(world, "DELETE", `/v1/orgs/${b.orgId}/keys/${key.id}`, { token: b.token }),
        404,
        "not_found"
      )
      expect((await call(world, "GET", `/v1/orgs/${a.orgId}/members`, { token: key.secret })).status).toBe(200)
    })

    it("at most 20 active keys per org", async () => {
      const boss = await owner(world)
      const keys = []
      for (let i = 0; i < 20; i++) keys.push(await makeOrgKey(world, boss.token, boss.orgId, "read"))
      expectError(
        await call(world, "POST", `/v1/orgs/${boss.orgId}/keys`, {
          token: boss.token,
          body: { name: "21st", scope: "read" }
        }),
        402,
        "plan_limit"
      )
      await call(world, "DELETE", `/v1/orgs/${boss.orgId}/keys/${keys[0]!.id}`, { token: boss.token })
      expect(
        (await call(world, "POST", `/v1/orgs/${boss.orgId}/keys`, {
          token: boss.token,
          body: { name: "again", scope: "read" }
        })).status
      )
        .toBe(201)
    })

    it("records last_used_at", async () => {
      const boss = await owner(world)
      const key = await makeOrgKey(world, boss.token, boss.orgId, "read")
      await call(world, "GET", `/v1/orgs/${boss.orgId}`, { token: key.secret })
      const lastUsed = await eventually(async () => {
        const listed = await call(world, "GET", `/v1/orgs/${boss.orgId}/keys`, { token: boss.token })
        return listed.json.keys[0].last_used_at
      }, { what: "last_used_at recorded" })
      expect(lastUsed).toMatch(/Z$/)
    })
  })
}
