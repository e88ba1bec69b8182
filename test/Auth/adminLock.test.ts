import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { killChildService, startChildService } from "../support/childService.js"
import { adminCommand } from "../support/serviceBuild.js"

/**
 * The admin command line refuses the embedded database while the service holds it (each
 * process would write its own copy and one would lose the other's work), says why, and
 * takes the database over once the holder is gone, even after a crash left its lock behind.
 */
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-lock-"))
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }))

const adminCli = (args: Array<string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const { BASE_URL: _base, DATABASE_URL: _db, ...inherited } = process.env
    const [node, ...commandArgs] = adminCommand(args)
    const child = spawn(node, commandArgs, {
      env: { ...inherited, DATA_DIR: dataDir },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.on("exit", (code) => resolve({ code, stdout, stderr }))
  })

describe("the embedded database lock", () => {
  it("refuses while the service runs, and works after the service is gone", async () => {
    const service = await startChildService({ DATA_DIR: dataDir })
    const orgId = randomUUID()
    try {
      const refused = await adminCli(["credit", "--org", orgId, "--credits", "5"])
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain(`is in use by process ${service.process.pid}`)
      expect(refused.stdout).not.toContain("Credited")
    } finally {
      // A crash: the lock file stays behind with a pid that no longer runs.
      await killChildService(service)
    }
    expect(fs.existsSync(path.join(dataDir, "embedded.lock"))).toBe(true)
    const afterCrash = await adminCli(["credit", "--org", orgId, "--credits", "5"])
    // It reached the database: the org simply does not exist there.
    expect(afterCrash.stderr).toContain(`No org ${orgId}`)
    expect(afterCrash.code).toBe(1)
    expect(fs.existsSync(path.join(dataDir, "embedded.lock"))).toBe(false)
  }, 180_000)
})
