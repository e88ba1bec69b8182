import { beforeAll, describe, expect, it } from "vitest"
import { seedAdmin } from "../../support/fixtures.js"
import {
  expectError,
  freshIp,
  joinAs,
  mailedToken,
  makeAgent,
  makeOrgKey,
  owner,
  signIn
} from "../../support/people.js"
import { call, eventually } from "../../support/world.js"
import { adminCall, auditOf, databaseDump, tablesHolding } from "../support.js"
import { world } from "./world.js"

/**
 * Carrying out a data-deletion request: every personal value the org had is gone from the
 * whole database (a dump of it searched), while ledger entries, receipts and payments stay.
 */
let admin: { adminId: string; token: string }

export const deletionCases = () => {
  beforeAll(async () => {
    admin = await seedAdmin(world.db)
  })

  describe("carrying out a data-deletion request", () => {
    it(
      "erases or anonymises every personal value of the org, keeps the ledger, closes the org and tells the asker",
      async () => {
        // The org, built the way its people built it.
        const founder = await owner(world, "Zephyr Quill Ltd")
        const orgId = founder.orgId
        await world.db.query(`UPDATE users SET name = 'Zelda Quintero' WHERE id = $1`, [founder.userId])
        await call(world, "POST", "/v1/waitlist", { body: { email: founder.email } })
        const member = await joinAs(world, founder.token, orgId, "member")
        const pendingInvite = "pending-invitee-zq@example.com"
        expect(
          (await call(world, "POST", `/v1/orgs/${orgId}/invites`, {
            token: founder.token,
            body: { email: pendingInvite, role: "member" }
          })).status
        ).toBe(201)
        // A person who also owns another org: they keep their account, and they file the request.
        const elsewhere = await owner(world, "Other Org")
        await world.db.query(
          `INSERT INTO org_members (org_id, user_id, role, created_at) VALUES ($1, $2, 'owner', now())`,
          [
            orgId,
            elsewhere.userId
          ]
        )
        const orgKey = await makeOrgKey(world, founder.token, orgId, "write")
        const agent = await makeAgent(world, founder.token, orgId, {
          name: "Zelda's research agent",
          ip_allowlist: ["127.0.0.1", "203.0.113.77"],
          approval_threshold_credits: 10
        })
        const hook = await call(world, "POST", `/v1/orgs/${orgId}/webhooks`, {
          token: founder.token,
          body: { url: "http://127.0.0.1:9/zq-private-hook-path" }
        })
        expect(hook.status).toBe(201)
        const inputs = [{ first_name: "Quentina", last_name: "Zarkovic", domain: "zq-private-domain.example" }]
        const asked = await call(world, "POST", "/v1/execute", {
          token: agent.key,
          body: { tool: "hunter-email-finder", inputs }
        })
        expect(asked.status).toBe(202)
        expect(
          (await call(world, "POST", `/v1/orgs/${orgId}/approvals/${asked.json.approval.id}/approve`, {
            token: founder.token,
            body: { note: "Fine by Zelda's manager" }
          })).status
        ).toBe(200)
        const bought = await call(world, "POST", "/v1/execute", {
          token: agent.key,
          body: { tool: "hunter-email-finder", inputs, approval_id: asked.json.approval.id }
        })
        expect(bought.status).toBe(200)
        expect(
          (await call(world, "POST", "/v1/disputes", {
            token: agent.key,
            body: { receipt_id: bought.json.receipt_id, item_index: 0, reason: "Wrong Quentina entirely" }
          })).status
        ).toBe(201)
        const filed = await call(world, "POST", `/v1/orgs/${orgId}/deletion-requests`, {
          token: elsewhere.token,
          body: { reason: "Zephyr Quill is closing down" }
        })
        expect(filed.status).toBe(201)
        await eventually(() => world.smtp.messages.some((m) => m.to.includes(pendingInvite)))

        const personal = [
          founder.email,
          member.email,
          pendingInvite,
          "Zelda Quintero",
          "Zephyr Quill",
          "Zelda's research agent",
          "203.0.113.77",
          "zq-private-hook-path",
          "Quentina",
          "Zarkovic",
          "zq-private-domain",
          "Fine by Zelda",
          "Wrong Quentina",
          "closing down"
        ]
        const [founderPhone] = await world.db.query(`SELECT phone FROM users WHERE id = $1`, [founder.userId])
        personal.push(founderPhone.phone)
        const before = await databaseDump(world.db)
        for (const value of personal) {
          expect(tablesHolding(before, value), `seeded: ${value}`).not.toEqual([])
        }
        const [ledgerBefore] = await world.db.query(
          `SELECT count(*)::int AS entries FROM ledger_entries WHERE org_id = $1`,
          [orgId]
        )

        // The queue, then carrying it out.
        const queue = await adminCall(world, admin, "GET", "/admin/deletion-requests?status=pending")
        expect(queue.json.deletion_requests.map((d: any) => d.id)).toContain(filed.json.deletion_request.id)
        const done = await adminCall(
          world,
          admin,
          "POST",
          `/admin/deletion-requests/${filed.json.deletion_request.id}/carry-out`
        )
        expect(done.status).toBe(200)
        expect(done.json.deletion_request).toMatchObject({ status: "completed", org_id: orgId })
        expect(done.json.deletion_request.summary).toMatchObject({
          people: 2,
          memberships: 3,
          invitations: 2,
          org_keys: 1,
          agents: 1,
          webhook_endpoints: 1,
          receipt_items_cleared: 1,
          approvals_cleared: 1,
          disputes_cleared: 1
        })
        expectError(
          await adminCall(world, admin, "POST", `/admin/deletion-requests/${filed.json.deletion_request.id}/carry-out`),
          409,
          "conflict"
        )

        // The asker is told, and the outbox forgets where the mail went.
        const mail = await world.smtp.waitFor(elsewhere.email, (m) => m.subject === "Your org's data was deleted")
        expect(mail.text).toContain("people: 2")
        await eventually(async () => {
          const [row] = await world.db.query(`SELECT status, to_address FROM mail_outbox WHERE dedupe_key = $1`, [
            `deletion:${filed.json.deletion_request.id}`
          ])
          return row?.status === "sent" && row.to_address === "erased"
        }, { what: "the completion mail to be sent and its address forgotten" })

        // Nothing personal is left anywhere.
        const after = await databaseDump(world.db)
        for (const value of personal) {
          expect(tablesHolding(after, value), `still holds ${value}`).toEqual([])
        }
        // The ledger, the receipt and its result hash stay.
        const [ledgerAfter] = await world.db.query(
          `SELECT count(*)::int AS entries FROM ledger_entries WHERE org_id = $1`,
          [orgId]
        )
        expect(ledgerAfter.entries).toBe(ledgerBefore.entries)
        const [item] = await world.db.query(
          `SELECT i.result_hash, i.cost_credits::text, i.status FROM receipt_items i WHERE i.receipt_id = $1`,
          [bought.json.receipt_id]
        )
        expect(item).toMatchObject({ result_hash: bought.json.items[0].result_hash, status: "passed" })

        // The org is closed: no way in for its keys or erased people; the other org's owner keeps their account.
        expect((await call(world, "GET", "/v1/agent", { token: agent.key })).status).toBe(401)
        expect((await call(world, "GET", `/v1/orgs/${orgId}`, { token: orgKey.secret })).status).toBe(401)
        expect((await call(world, "GET", "/v1/me", { token: founder.token })).status).toBe(401)
        expect((await call(world, "GET", `/v1/orgs/${orgId}`, { token: elsewhere.token })).status).toBe(404)
        expect((await call(world, "GET", `/v1/orgs/${elsewhere.orgId}`, { token: elsewhere.token })).status).toBe(200)
        const mine = await call(world, "GET", "/v1/me/deletion-requests", { token: elsewhere.token })
        expect(mine.json.deletion_requests[0]).toMatchObject({
          id: filed.json.deletion_request.id,
          status: "completed",
          summary: done.json.deletion_request.summary
        })
        // An erased person signing in again starts afresh, with no tie to the closed org.
        const back = await signIn(world, founder.email)
        expect(back.userId).not.toBe(founder.userId)
        expect((await auditOf(world.db, orgId)).map((row: any) => row.action)).toEqual(["org.erase"])
      },
      120_000
    )

    it(
      "erases a person whose last org goes after an earlier request: no copy of their address, phone or name is left",
      async () => {
        // Pollux owns two orgs, signs in from a known address and browser, and is on the waitlist.
        const pollux = await owner(world, "Pollux First")
        await world.db.query(`UPDATE users SET name = 'Perpetua Ossington' WHERE id = $1`, [pollux.userId])
        const [{ phone }] = await world.db.query(`SELECT phone FROM users WHERE id = $1`, [pollux.userId])
        const secondOrg = await call(world, "POST", "/v1/orgs", {
          token: pollux.token,
          body: { name: "Pollux Second" }
        })
        expect(secondOrg.status).toBe(201)
        const orgA = pollux.orgId
        const orgB = secondOrg.json.org.id as string
        await call(world, "POST", "/v1/waitlist", { body: { email: pollux.email } })
        const browser = "PolluxBrowser/7.7"
        const seenFrom = "192.0.2.177"
        const sent = world.smtp.messages.length
        expect((await call(world, "POST", "/auth/email/start", { body: { email: pollux.email }, ip: seenFrom })).status)
          .toBe(202)
        const linkToken = await mailedToken(world, pollux.email, "/auth/email/verify", sent)
        expect(
          (await call(world, "POST", "/auth/email/verify", {
            body: { token: linkToken },
            ip: seenFrom,
            headers: { "user-agent": browser }
          })).status
        ).toBe(200)

        // In a third org Pollux made a key, invited someone, decided an approval and asked for
        // its deletion, then was removed; a fourth org invited Pollux, who never answered.
        const quincy = await owner(world, "Quincy Org")
        const orgC = quincy.orgId
        const joined = world.smtp.messages.length
        expect(
          (await call(world, "POST", `/v1/orgs/${orgC}/invites`, {
            token: quincy.token,
            body: { email: pollux.email, role: "owner" }
          })).status
        ).toBe(201)
        const inviteToken = await mailedToken(world, pollux.email, "/invites/accept", joined)
        expect(
          (await call(world, "POST", "/auth/invites/accept", { token: pollux.token, body: { token: inviteToken } }))
            .status
        ).toBe(200)
        await makeOrgKey(world, pollux.token, orgC, "read")
        expect(
          (await call(world, "POST", `/v1/orgs/${orgC}/invites`, {
            token: pollux.token,
            body: { email: "invited-by-pollux@example.com", role: "member" }
          })).status
        ).toBe(201)
        const agent = await makeAgent(world, quincy.token, orgC, { approval_threshold_credits: 10 })
        const asked = await call(world, "POST", "/v1/execute", {
          token: agent.key,
          body: {
            tool: "hunter-email-finder",
            inputs: [{ first_name: "Ada", last_name: "Byron", domain: "example.org" }]
          }
        })
        expect(asked.status).toBe(202)
        expect(
          (await call(world, "POST", `/v1/orgs/${orgC}/approvals/${asked.json.approval.id}/approve`, {
            token: pollux.token,
            body: {}
          })).status
        ).toBe(200)
        const requestC = await call(world, "POST", `/v1/orgs/${orgC}/deletion-requests`, {
          token: pollux.token,
          body: { reason: "Pollux thinks Quincy Org should go" }
        })
        expect(requestC.status).toBe(201)
        expect(
          (await call(world, "DELETE", `/v1/orgs/${orgC}/members/${pollux.userId}`, { token: quincy.token })).status
        )
          .toBe(200)
        const rhea = await owner(world, "Rhea Org")
        expect(
          (await call(world, "POST", `/v1/orgs/${rhea.orgId}/invites`, {
            token: rhea.token,
            body: { email: pollux.email, role: "member" }
          })).status
        ).toBe(201)

        // Quincy, who keeps an account, is invited into the second org and has a sign-in link waiting.
        expect(
          (await call(world, "POST", `/v1/orgs/${orgB}/invites`, {
            token: pollux.token,
            body: { email: quincy.email, role: "member" }
          })).status
        ).toBe(201)
        const quincyMail = world.smtp.messages.length
        expect(
          (await call(world, "POST", "/auth/email/start", { body: { email: quincy.email }, ip: freshIp() })).status
        )
          .toBe(202)
        const quincyLink = await mailedToken(world, quincy.email, "/auth/email/verify", quincyMail)

        // A mail to Pollux that failed, its error quoting the address as SMTP servers do.
        await world.db.query(
          `UPDATE mail_outbox SET status = 'failed', last_error = $2
         WHERE id = (SELECT id FROM mail_outbox WHERE to_address = $1 AND status = 'sent' LIMIT 1)`,
          [pollux.email, `550 5.1.1 <${pollux.email}>: Recipient address rejected`]
        )
        const personal = [pollux.email, phone, "Perpetua Ossington", browser, seenFrom, "Pollux thinks"]
        const before = await databaseDump(world.db)
        for (const value of personal) expect(tablesHolding(before, value), `seeded: ${value}`).not.toEqual([])

        // The first org goes: Pollux still owns the second, so keeps the account.
        const carryOut = async (orgId: string, reason: string) => {
          const filed = await call(world, "POST", `/v1/orgs/${orgId}/deletion-requests`, {
            token: pollux.token,
            body: { reason }
          })
          expect(filed.status).toBe(201)
          const id = filed.json.deletion_request.id as string
          expect((await adminCall(world, admin, "POST", `/admin/deletion-requests/${id}/carry-out`)).status).toBe(200)
          await eventually(async () => {
            const [row] = await world.db.query(`SELECT status, to_address FROM mail_outbox WHERE dedupe_key = $1`, [
              `deletion:${id}`
            ])
            return row?.status === "sent" && row.to_address === "erased"
          }, { what: "the completion mail to be sent and its address forgotten" })
        }
        await carryOut(orgA, "Pollux closes the first one")
        expect((await call(world, "GET", "/v1/me", { token: pollux.token })).status).toBe(200)
        expect(tablesHolding(await databaseDump(world.db), pollux.email)).toContain("public.deletion_requests")

        // Then the last one: Pollux is erased, and so is every copy of what identified them.
        await carryOut(orgB, "Pollux closes the second one")
        expect((await call(world, "GET", "/v1/me", { token: pollux.token })).status).toBe(401)
        const after = await databaseDump(world.db)
        for (const value of personal) expect(tablesHolding(after, value), `still holds ${value}`).toEqual([])

        // Other orgs' records stay, naming the anonymised address; Quincy's link still signs in.
        const [key] = await world.db.query(`SELECT created_by_email FROM org_keys WHERE org_id = $1`, [orgC])
        expect(key.created_by_email).toBe(`erased-${pollux.userId}@erased.invalid`)
        const invites = await world.db.query(`SELECT email, invited_by_email FROM org_invites WHERE org_id = $1`, [
          orgC
        ])
        expect(invites).toEqual([
          { email: "invited-by-pollux@example.com", invited_by_email: `erased-${pollux.userId}@erased.invalid` }
        ])
        expect(await world.db.query(`SELECT id FROM org_invites WHERE org_id = $1`, [rhea.orgId])).toEqual([])
        expect((await call(world, "POST", "/auth/email/verify", { body: { token: quincyLink } })).status).toBe(200)

        // The request Pollux left behind in the third org is carried out without mailing anyone.
        const mailed = world.smtp.messages.length
        expect(
          (await adminCall(
            world,
            admin,
            "POST",
            `/admin/deletion-requests/${requestC.json.deletion_request.id}/carry-out`
          ))
            .json.deletion_request
        ).toMatchObject({ status: "completed", requested_by_email: `erased-${pollux.userId}@erased.invalid` })
        expect(
          await world.db.query(`SELECT id FROM mail_outbox WHERE dedupe_key = $1`, [
            `deletion:${requestC.json.deletion_request.id}`
          ])
        ).toEqual([])
        expect(world.smtp.messages.slice(mailed).filter((m) => m.to.some((to) => to.includes("erased")))).toEqual([])
      },
      120_000
    )
  })
}
