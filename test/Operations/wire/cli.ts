import { beforeAll, describe, expect, it } from "vitest"
import { runAdminCli } from "../../support/adminCli.js"
import { seedAdmin, seedOrg } from "../../support/fixtures.js"
import { balanceOf } from "../../support/ledgerChecks.js"
import { call, topUp } from "../../support/world.js"
import { auditOf } from "../support.js"
import { world } from "./world.js"

/** `npm run admin -- <command>`: the same operations as the /admin endpoints, audited with the named administrator. */
let admin: { adminId: string; email: string }

export const cliCases = () => {
  beforeAll(async () => {
    const seeded = await seedAdmin(world.db)
    const [row] = await world.db.query(`SELECT email FROM admins WHERE id = $1`, [seeded.adminId])
    admin = { adminId: seeded.adminId, email: row.email }
  })

  const adminCli = (args: Array<string>) => runAdminCli({ DATABASE_URL: world.db.url }, args)

  describe("the admin command line", () => {
    it("pauses a tool, answering a refused action with its error code", async () => {
      const refused = await adminCli(["tool-pause", "--admin", admin.email, "--tool", "apollo-people-match"])
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain("reason_required: Pausing a tool needs a written `reason`")
      const unknown = await adminCli(["tool-pause", "--admin", "nobody@example.com", "--tool", "apollo-people-match"])
      expect(unknown.stderr).toContain("No administrator nobody@example.com")

      const paused = await adminCli([
        "tool-pause",
        "--admin",
        admin.email,
        "--tool",
        "apollo-people-match",
        "--reason",
        "Scheduled maintenance"
      ])
      expect(paused.code, paused.stderr).toBe(0)
      expect(JSON.parse(paused.stdout)).toMatchObject({
        tool: { status: "paused", paused_reason: "Scheduled maintenance" }
      })
      const listed = (await call(world, "GET", "/v1/tools")).json.tools.find((t: any) =>
        t.slug === "apollo-people-match"
      )
      expect(listed).toMatchObject({ status: "paused", purchasable: false })
      const [line] = await auditOf(world.db, listed.id)
      expect(line).toMatchObject({ action: "tool.pause", admin_id: admin.adminId, reason: "Scheduled maintenance" })
    }, 60_000)

    it("runs a benchmark to the end with --wait, showing its progress", async () => {
      const run = await adminCli(["benchmark", "--admin", admin.email, "--tool", "hunter-email-finder", "--wait"])
      expect(run.code, run.stderr).toBe(0)
      expect(run.stderr).toContain("done: 20/20 samples")
      expect(JSON.parse(run.stdout)).toMatchObject({ status: "done", results: { sample_size: 20, accuracy: 0.8 } })
    }, 60_000)

    it("adjusts credits with the confirmation rule and reads the audit log", async () => {
      const org = await seedOrg(world.db)
      await topUp(world, org.orgId, 1_000n)
      const adjust = (...extra: Array<string>) =>
        adminCli(["adjust", "--admin", admin.email, "--org", org.orgId, "--reason", "Wire received", ...extra])
      const unconfirmed = await adjust("--credits", "2000000")
      expect(unconfirmed.stderr).toContain("confirmation_required")
      const confirmed = await adjust("--credits", "2000000", "--confirm", "2000000")
      expect(confirmed.code, confirmed.stderr).toBe(0)
      expect(JSON.parse(confirmed.stdout)).toMatchObject({ credits: "2000000", balance: "2001000" })
      expect(await balanceOf(world.db, org.orgId)).toBe(2_001_000n)

      const audit = await adminCli(["audit", "--target", org.orgId])
      expect(JSON.parse(audit.stdout).entries).toMatchObject([
        { action: "org.adjust_credits", reason: "Wire received", admin_email: admin.email }
      ])
      const credited = await adminCli(["credit", "--org", org.orgId, "--credits", "5"])
      expect(credited.stderr).toContain("--admin is required")
    }, 60_000)
  })
}
