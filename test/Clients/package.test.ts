import { execFile } from "node:child_process"
import { access, mkdtemp, readdir, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { seedAgent, seedOrg } from "../support/fixtures.js"
import { startWorld, type World } from "../support/world.js"

/**
 * The TypeScript client as its users get it: `npm pack` builds a tarball that installs in an
 * empty project, whose code calls the service and whose `agent-gateway-mcp` command exists.
 */
const run = promisify(execFile)
const packageDir = new URL("../../clients/typescript/", import.meta.url).pathname

let world: World
let key: string
let scratch: string

beforeAll(async () => {
  world = await startWorld("ts_package")
  const org = await seedOrg(world.db)
  key = (await seedAgent(world.db, org.orgId)).key
  scratch = await mkdtemp(join(tmpdir(), "agent-gateway-client-"))
})

afterAll(async () => {
  await world?.close()
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true })
})

describe("the TypeScript client's package", () => {
  it("packs, installs in an empty project and works there", async () => {
    const npmEnv = { ...process.env, npm_config_update_notifier: "false", npm_config_fund: "false" }
    await run("npm", ["pack", "--pack-destination", scratch], { cwd: packageDir, env: npmEnv, timeout: 180_000 })
    const tarball = (await readdir(scratch)).find((name) => name.endsWith(".tgz"))
    expect(tarball).toMatch(/^agent-gateway-client-0\.1\.0\.tgz$/)

    const project = join(scratch, "project")
    await run("mkdir", ["-p", project])
    await writeFile(join(project, "package.json"), JSON.stringify({ name: "empty", private: true, type: "module" }))
    await run("npm", ["install", "--prefer-offline", "--no-audit", join(scratch, tarball!)], {
      cwd: project,
      env: npmEnv,
      timeout: 180_000
    })
    await writeFile(
      join(project, "agent.mjs"),
      `import { AgentGateway, isServiceError } from "@agent-gateway/client"
const gateway = new AgentGateway()
const agent = await gateway.agent()
const refused = await new AgentGateway({ apiKey: "sk_test_wrong", maxRetries: 0 }).agent().catch((error) => error)
console.log(JSON.stringify({ mode: agent.mode, refused: isServiceError(refused, "unauthenticated") }))
`
    )
    const { stdout } = await run("node", ["agent.mjs"], {
      cwd: project,
      env: { PATH: process.env["PATH"] ?? "", SERVICE_API_KEY: key, SERVICE_API_URL: world.server.url },
      timeout: 60_000
    })
    expect(JSON.parse(stdout)).toEqual({ mode: "test", refused: true })
    await access(join(project, "node_modules", ".bin", "agent-gateway-mcp"))
  }, 360_000)
})
