import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { beforeAll, describe, expect, it } from "vitest"
import { errorCatalogue } from "../../../src/Errors/ErrorCatalogue.js"
import { seedAgent, seedOrg, seedOrgKey } from "../../support/fixtures.js"
import { topUp } from "../../support/world.js"
import { world } from "./world.js"

/**
 * The Python client (clients/python, standard library only) runs its own unittest suites:
 * the retry rules against a loopback fault server, webhook verification, and the whole
 * client against this service on real PostgreSQL.
 */
const run = promisify(execFile)
const clientDir = new URL("../../../clients/python/", import.meta.url).pathname

let env: Record<string, string>

export const pythonCases = () => {
  beforeAll(async () => {
    const org = await seedOrg(world.db)
    await topUp(world, org.orgId, 1_000_000n)
    const testAgent = await seedAgent(world.db, org.orgId, {
      mode: "test",
      approvalThresholdCredits: null,
      monthlyBudgetCredits: 10_000_000n
    })
    const liveAgent = await seedAgent(world.db, org.orgId, { mode: "live", monthlyBudgetCredits: 10_000_000n })
    env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      SERVICE_API_URL: world.server.url,
      SERVICE_API_KEY: testAgent.key,
      AGENT_GATEWAY_LIVE_KEY: liveAgent.key,
      AGENT_GATEWAY_ORG_ID: org.orgId,
      AGENT_GATEWAY_ORG_KEY: (await seedOrgKey(world.db, org.orgId, org.owner, "read")).secret,
      AGENT_GATEWAY_REQUIRE_SERVICE: "1"
    }
  })

  const unittest = (module: string) =>
    run("python3", ["-m", "unittest", "-v", module], { cwd: clientDir, env, timeout: 120_000 }).catch(
      (failure: { stdout: string; stderr: string }) => {
        throw new Error(`python3 -m unittest ${module} failed:\n${failure.stderr}\n${failure.stdout}`)
      }
    )

  describe("the Python client", () => {
    it("knows every error code of the service", async () => {
      const { stdout } = await run(
        "python3",
        ["-c", "import json, agent_gateway; print(json.dumps(list(agent_gateway.SERVICE_ERROR_CODES)))"],
        { cwd: clientDir, env }
      )
      expect([...JSON.parse(stdout)].sort()).toEqual(Object.keys(errorCatalogue).sort())
    })

    it("follows the retry rules against a fault server", async () => {
      const { stderr } = await unittest("tests.test_retry_rules")
      expect(stderr).toMatch(/Ran 14 tests[\s\S]*OK/)
    }, 120_000)

    it("verifies webhook deliveries", async () => {
      const { stderr } = await unittest("tests.test_webhooks")
      expect(stderr).toMatch(/OK/)
    })

    it(
      "verifies signed receipts: canonical JSON, Ed25519 in the standard library, the service's receipts",
      async () => {
        const { stderr } = await unittest("tests.test_receipts")
        expect(stderr).toMatch(/Ran 10 tests[\s\S]*OK/)
        // Only the optional cryptography package's own checks may be skipped, and only without it.
        const hasCryptography = await run("python3", ["-c", "import cryptography"]).then(() => true, () => false)
        expect(stderr).not.toMatch(hasCryptography ? /skipped/ : /skipped '(?!the optional cryptography)/)
      },
      120_000
    )

    it("buys, reads receipts, waits for jobs and calls the gateway against the service", async () => {
      const { stderr } = await unittest("tests.test_service")
      expect(stderr).toMatch(/Ran 13 tests[\s\S]*OK$/m)
      expect(stderr).not.toMatch(/skipped/)
    }, 120_000)

    it("runs the example agent (examples/python_agent.py): recommend, execute, read the receipt, check its signature", async () => {
      const example = new URL("../../../examples/python_agent.py", import.meta.url).pathname
      const { stdout } = await run("python3", [example], { env, timeout: 60_000 })
      expect(stdout).toMatch(/^best tool: \S+/m)
      expect(stdout).toMatch(/^receipt [0-9a-f-]{36}: (passed|partial), charged \d+ credits$/m)
      expect(stdout).toMatch(/^signature verified: key \S+$/m)
    })
  })
}
