import { describe, expect, it } from "vitest"
import { sha256Hex } from "../../../src/Services/SecretBox/Hashes.js"
import { expectError, freshEmail, joinAs, mailedToken, makeOrgKey, owner, signIn } from "../../support/people.js"
import { call } from "../../support/world.js"
import { world } from "./world.js"

const ownerOnly = "Only an org owner can do this"

export const membersCases = () => {
  describe("invitations", () => {
    it("an owner invites by email; the invitee signs in and accepts with the mailed token", async () => {
      const boss = await owner(world)
      const invitee = await signIn(world)
      const before = world.smtp.messages.length
      const res = await call(world, "POST", `/v1/orgs/${boss.orgId}/invites`, {
        token: boss.token,
        body: { email: invitee.email.toUpperCase(), role: "member" }
      })
      expect(res.status).toBe(201)
      expect(res.json.invite).toMatchObject({ email: invitee.email, role: "member", invited_by_email: boss.email })
      const created = new Date(res.json.invite.created_at).getTime()
      expect(new Date(res.json.invite.expires_at).getTime() - created).toBe(7 * 24 * 3600_000)

      const mail = await world.smtp.waitFor(invitee.email, (m) => world.smtp.messages.indexOf(m) >= before)
      expect(mail.subject).toContain("Acme")
      expect(mail.text).toContain("https://app.example.test/dashboard/invites/accept?token=inv_")
      const token = await mailedToken(world, invitee.email, "/invites/accept", before)
      expect(
        (await world.db.query("SELECT token_hash FROM org_invites WHERE id = $1", [res.json.invite.id]))[0].token_hash
      )
        .toBe(sha256Hex(token))

      const listed = await call(world, "GET", `/v1/orgs/${boss.orgId}/invites`, { token: boss.token })
      expect(listed.json.invites.map((i: any) => i.id)).toEqual([res.json.invite.id])

      const accepted = await call(world, "POST", "/auth/invites/accept", { token: invitee.token, body: { token } })
      expect(accepted.status).toBe(200)
      expect(accepted.json.org).toMatchObject({ id: boss.orgId, name: "Acme", role: "member" })
      const me = await call(world, "GET", "/v1/me", { token: invitee.token })
      expect(me.json.orgs).toEqual([{ id: boss.orgId, name: "Acme", role: "member" }])

      // Used: invalid_token; pending list is empty.
      expectError(
        await call(world, "POST", "/auth/invites/accept", { token: invitee.token, body: { token } }),
        401,
        "invalid_token"
      )
      expect((await call(world, "GET", `/v1/orgs/${boss.orgId}/invites`, { token: boss.token })).json.invites).toEqual(
        []
      )
    })

    it("bad, expired and withdrawn invitations answer 401 invalid_token", async () => {
      const boss = await owner(world)
      const invitee = await signIn(world)
      expectError(
        await call(world, "POST", "/auth/invites/accept", { token: invitee.token, body: { token: "inv_bogus" } }),
        401,
        "invalid_token"
      )

      let before = world.smtp.messages.length
      const first = await call(world, "POST", `/v1/orgs/${boss.orgId}/invites`, {
        token: boss.token,
        body: { email: invitee.email }
      })
      const expiring = await mailedToken(world, invitee.email, "/invites/accept", before)
      await world.db.query("UPDATE org_invites SET expires_at = now() - interval '1 second' WHERE id = $1", [
        first.json.invite.id
      ])
      expectError(
        await call(world, "POST", "/auth/invites/accept", { token: invitee.token, body: { token: expiring } }),
        401,
        "invalid_token"
      )

      before = world.smtp.messages.length
      const second = await call(world, "POST", `/v1/orgs/${boss.orgId}/invites`, {
        token: boss.token,
        body: { email: invitee.email }
      })
      const withdrawn = await mailedToken(world, invitee.email, "/invites/accept", before)
      const revoke = await call(world, "DELETE", `/v1/orgs/${boss.orgId}/invites/${second.json.invite.id}`, {
        token: boss.token
      })
      expect(revoke.json).toEqual({ status: "revoked" })
      expectError(
        await call(world, "POST", "/auth/invites/accept", { token: invitee.token, body: { token: withdrawn } }),
        401,
        "invalid_token"
      )
      expectError(
        await call(world, "DELETE", `/v1/orgs/${boss.orgId}/invites/${second.json.invite.id}`, { token: boss.token }),
        404,
        "not_found"
      )
    })

    it("an invitation is accepted only by the address it was sent to (403 forbidden otherwise)", async () => {
      const boss = await owner(world)
      const intended = freshEmail()
      const other = await signIn(world)
      const before = world.smtp.messages.length
      await call(world, "POST", `/v1/orgs/${boss.orgId}/invites`, { token: boss.token, body: { email: intended } })
      const token = await mailedToken(world, intended, "/invites/accept", before)
      expectError(
        await call(world, "POST", "/auth/invites/accept", { token: other.token, body: { token } }),
        403,
        "forbidden"
      )
      expectError(await call(world, "POST", "/auth/invites/accept", { body: { token } }), 401, "unauthenticated")
    })

    it("inviting someone already in the org answers 409 conflict", async () => {
      const boss = await owner(world)
      expectError(
        await call(world, "POST", `/v1/orgs/${boss.orgId}/invites`, { token: boss.token, body: { email: boss.email } }),
        409,
        "conflict"
      )
    })

    it("members cannot invite: 403 forbidden, Only an org owner can do this", async () => {
      const boss = await owner(world)
      const member = await joinAs(world, boss.token, boss.orgId)
      expectError(
        await call(world, "POST", `/v1/orgs/${boss.orgId}/invites`, {
          token: member.token,
          body: { email: freshEmail() }
        }),
        403,
        "forbidden",
        ownerOnly
      )
    })

    it("stops at the plan's seat limit (Pay as you go: 3, members plus pending invitations) with 402 plan_limit", async () => {
      const pricing = await call(world, "GET", "/v1/pricing")
      const payg = pricing.json.plans.find((p: any) => p.id === "payg")
      expect(payg.max_seats).toBe(3)
      const boss = await owner(world)
      await joinAs(world, boss.token, boss.orgId)
      const pending = await call(world, "POST", `/v1/orgs/${boss.orgId}/invites`, {
        token: boss.token,
        body: { email: freshEmail() }
      })
      expect(pending.status).toBe(201)
      const refused = await call(world, "POST", `/v1/orgs/${boss.orgId}/invites`, {
        token: boss.token,
        body: { email: freshEmail() }
      })
      expectError(refused, 402, "plan_limit")
      // Withdrawing the pending invitation frees its seat.
      await call(world, "DELETE", `/v1/orgs/${boss.orgId}/invites/${pending.json.invite.id}`, { token: boss.token })
      expect(
        (await call(world, "POST", `/v1/orgs/${boss.orgId}/invites`, {
          token: boss.token,
          body: { email: freshEmail() }
        })).status
      )
        .toBe(201)
    })

    it("a seat taken while an invitation waited makes accepting it answer 402 plan_limit", async () => {
      const boss = await owner(world)
      const late = await signIn(world)
      const before = world.smtp.messages.length
      await call(world, "POST", `/v1/orgs/${boss.orgId}/invites`, { token: boss.token, body: { email: late.email } })
      const token = await mailedToken(world, late.email, "/invites/accept", before)
      // Members arrive by other means until the org is full.
      for (let i = 0; i < 2; i++) {
        const extra = await signIn(world)
        await world.db.query(
          "INSERT INTO org_members (org_id, user_id, role, created_at) VALUES ($1, $2, 'member', now())",
          [
            boss.orgId,
            extra.userId
          ]
        )
      }
      expectError(
        await call(world, "POST", "/auth/invites/accept", { token: late.token, body: { token } }),
        402,
        "plan_limit"
      )
    })
  })

  describe("members and roles", () => {
    it("lists members with their roles", async () => {
      const boss = await owner(world)
      const member = await joinAs(world, boss.token, boss.orgId)
      const res = await call(world, "GET", `/v1/orgs/${boss.orgId}/members`, { token: member.token })
      expect(res.status).toBe(200)
      const byEmail = Object.fromEntries(res.json.members.map((m: any) => [m.email, m]))
      expect(byEmail[boss.email]).toMatchObject({ user_id: boss.userId, role: "owner", name: null })
      expect(byEmail[member.email]).toMatchObject({ user_id: member.userId, role: "member" })
    })

    it("an owner changes roles; a member may not (403); the last owner cannot step down (409 last_owner)", async () => {
      const boss = await owner(world)
      const member = await joinAs(world, boss.token, boss.orgId)
      expectError(
        await call(world, "PATCH", `/v1/orgs/${boss.orgId}/members/${boss.userId}`, {
          token: member.token,
          body: { role: "member" }
        }),
        403,
        "forbidden",
        ownerOnly
      )
      expectError(
        await call(world, "PATCH", `/v1/orgs/${boss.orgId}/members/${boss.userId}`, {
          token: boss.token,
          body: { role: "member" }
        }),
        409,
        "last_owner"
      )
      const promoted = await call(world, "PATCH", `/v1/orgs/${boss.orgId}/members/${member.userId}`, {
        token: boss.token,
        body: { role: "owner" }
      })
      expect(promoted.status).toBe(200)
      expect(promoted.json.member).toMatchObject({ user_id: member.userId, role: "owner" })
      // With two owners, one may step down.
      const stepped = await call(world, "PATCH", `/v1/orgs/${boss.orgId}/members/${boss.userId}`, {
        token: boss.token,
        body: { role: "member" }
      })
      expect(stepped.json.member.role).toBe("member")
      expectError(
        await call(world, "PATCH", `/v1/orgs/${boss.orgId}/members/${member.userId}`, {
          token: member.token,
          body: { role: "member" }
        }),
        409,
        "last_owner"
      )
      expectError(
        await call(world, "PATCH", `/v1/orgs/${boss.orgId}/members/${member.userId}`, {
          token: member.token,
          body: { role: "admin" }
        }),
        400,
        "invalid_input"
      )
      expectError(
        await call(world, "PATCH", `/v1/orgs/${boss.orgId}/members/00000000-0000-4000-8000-000000000000`, {
          token: member.token,
          body: { role: "member" }
        }),
        404,
        "not_found"
      )
    })

    it("removal: owner only, members may leave, the last owner may not go, and the person's org keys stop", async () => {
      const boss = await owner(world)
      const member = await joinAs(world, boss.token, boss.orgId)
      const coOwner = await joinAs(world, boss.token, boss.orgId, "owner")
      const coOwnerKey = await makeOrgKey(world, coOwner.token, boss.orgId, "read")
      expect((await call(world, "GET", `/v1/orgs/${boss.orgId}/members`, { token: coOwnerKey.secret })).status).toBe(
        200
      )

      expectError(
        await call(world, "DELETE", `/v1/orgs/${boss.orgId}/members/${coOwner.userId}`, { token: member.token }),
        403,
        "forbidden",
        ownerOnly
      )
      const removed = await call(world, "DELETE", `/v1/orgs/${boss.orgId}/members/${coOwner.userId}`, {
        token: boss.token
      })
      expect(removed.json).toEqual({ status: "removed" })
      expectError(
        await call(world, "GET", `/v1/orgs/${boss.orgId}/members`, { token: coOwnerKey.secret }),
        401,
        "unauthenticated",
        "Unknown or revoked org key"
      )
      expectError(
        await call(world, "GET", `/v1/orgs/${boss.orgId}/members`, { token: coOwner.token }),
        404,
        "not_found"
      )

      expect(
        (await call(world, "DELETE", `/v1/orgs/${boss.orgId}/members/${member.userId}`, { token: member.token })).json
      )
        .toEqual({ status: "removed" })
      expectError(
        await call(world, "DELETE", `/v1/orgs/${boss.orgId}/members/${boss.userId}`, { token: boss.token }),
        409,
        "last_owner"
      )
      expectError(
        await call(world, "DELETE", `/v1/orgs/${boss.orgId}/members/${member.userId}`, { token: boss.token }),
        404,
        "not_found"
      )
    })

    it("an org key acts with its maker's current role", async () => {
      const boss = await owner(world)
      const other = await joinAs(world, boss.token, boss.orgId, "owner")
      const key = await makeOrgKey(world, other.token, boss.orgId, "write")
      expect(
        (await call(world, "POST", `/v1/orgs/${boss.orgId}/invites`, {
          token: key.secret,
          body: { email: freshEmail() }
        })).status
      )
        .toBe(201)
      await call(world, "PATCH", `/v1/orgs/${boss.orgId}/members/${other.userId}`, {
        token: boss.token,
        body: { role: "member" }
      })
      expectError(
        await call(world, "POST", `/v1/orgs/${boss.orgId}/invites`, {
          token: key.secret,
          body: { email: freshEmail() }
        }),
        403,
        "forbidden",
        ownerOnly
      )
    })
  })

  describe("data-deletion requests", () => {
    it("an owner's session asks; members and org keys read; nobody else may ask", async () => {
      const boss = await owner(world)
      const member = await joinAs(world, boss.token, boss.orgId)
      const writeKey = await makeOrgKey(world, boss.token, boss.orgId, "write")
      const readKey = await makeOrgKey(world, boss.token, boss.orgId, "read")

      expectError(
        await call(world, "POST", `/v1/orgs/${boss.orgId}/deletion-requests`, { token: member.token, body: {} }),
        403,
        "forbidden",
        ownerOnly
      )
      expectError(
        await call(world, "POST", `/v1/orgs/${boss.orgId}/deletion-requests`, { token: writeKey.secret, body: {} }),
        403,
        "forbidden"
      )
      expectError(
        await call(world, "POST", `/v1/orgs/${boss.orgId}/deletion-requests`, { token: readKey.secret, body: {} }),
        403,
        "forbidden"
      )

      const made = await call(world, "POST", `/v1/orgs/${boss.orgId}/deletion-requests`, {
        token: boss.token,
        body: { reason: "Closing the account" }
      })
      expect(made.status).toBe(201)
      expect(made.json.deletion_request).toMatchObject({
        status: "pending",
        reason: "Closing the account",
        requested_by_email: boss.email
      })

      for (const token of [member.token, readKey.secret, writeKey.secret, boss.token]) {
        const listed = await call(world, "GET", `/v1/orgs/${boss.orgId}/deletion-requests`, { token })
        expect(listed.status).toBe(200)
        expect(listed.json.deletion_requests).toEqual([made.json.deletion_request])
      }
    })
  })
}
