import { execFile } from "node:child_process"
import { access, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { seedAgent, seedOrg } from "../support/fixtures.js"
import { startWorld, type World } from "../support/world.js"

/**
 * The TypeScript client as its users get it: its build (the contract package's first) makes
 * tarballs that hold only their own files, no server code, and install in an empty project,
 * whose code calls the service and whose `agent-gateway-mcp` command exists.
 */
const run = promisify(execFile)
const root = new URL("../../", import.meta.url).pathname
const clientDir = join(root, "clients/typescript")
const contractDir = join(root, "packages/contract")
const npmEnv = { ...process.env, npm_config_update_notifier: "false", npm_config_fund: "false" }

/** The files `npm pack` would put in a package's tarball (the package is built already). */
const packedFiles = async (dir: string): Promise<Array<string>> => {
  const { stdout } = await run("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: dir, env: npmEnv })
  return (JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((file) => file.path).sort()
}

/** The files a `.ts` source compiles to. */
const compiled = (source: string): Array<string> => [source.replace(/\.ts$/, ".d.ts"), source.replace(/\.ts$/, ".js")]

/** The contract's sources (docs/conventions.md): Domain, Errors, the Api, the groups, the middleware tags. */
const isContractSource = (path: string): boolean =>
  /^(Domain|Errors|Http\/Groups)\/[\w/]+\.ts$|^Http\/Api\.ts$|^Http\/Security\/\w+Tags\.ts$/.test(path)

/** A path of server code: a folder of the service's other side, or its entry point. */
const SERVER = /(^|\/)(Services|Layers|Handlers|Middleware|OpenApi)\/|(^|\/)main\.(js|d\.ts)$/

let world: World
let key: string
let scratch: string

beforeAll(async () => {
  world = await startWorld("ts_package")
  const org = await seedOrg(world.db)
  key = (await seedAgent(world.db, org.orgId)).key
  scratch = await mkdtemp(join(tmpdir(), "agent-gateway-client-"))
  // What `npm pack` runs first (prepack): the contract's build, then the client's.
  await run("npm", ["run", "build"], { cwd: clientDir, env: npmEnv, timeout: 240_000 })
}, 300_000)

afterAll(async () => {
  await world?.close()
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true })
})

describe("the TypeScript client's package", () => {
  it("holds only the client's own files, built from clients/typescript/src", async () => {
    const sources = (await readdir(join(clientDir, "src"), { recursive: true })).filter((path) => path.endsWith(".ts"))
    expect(sources).toContain("bridge.ts")
    const files = await packedFiles(clientDir)
    expect(files).toEqual(
      ["README.md", "package.json", ...sources.flatMap(compiled).map((path) => `dist/${path}`)].sort()
    )
    for (const file of files) expect(file).not.toMatch(SERVER)
  })

  it("imports only its dependencies, Node's modules, its own files and the contract's", async () => {
    const manifest = JSON.parse(await readFile(join(clientDir, "package.json"), "utf8"))
    const dependencies = Object.keys(manifest.dependencies)
    expect(dependencies).toContain("@agent-gateway/contract")
    const contractFiles = await packedFiles(contractDir)
    const built = (await packedFiles(clientDir)).filter((path) => path.endsWith(".js"))
    for (const file of built) {
      const code = await readFile(join(clientDir, file), "utf8")
      for (const [, specifier] of code.matchAll(/^(?:import|export)\b[^"]*?from "([^"]+)"/gm)) {
        const contractPath = /^@agent-gateway\/contract\/(.+)$/.exec(specifier!)?.[1]
        if (contractPath !== undefined) expect(contractFiles, `${file}: ${specifier}`).toContain(`dist/${contractPath}`)
        else if (specifier!.startsWith(".")) expect(built, `${file}: ${specifier}`).toContain(join("dist", specifier!))
        else if (!specifier!.startsWith("node:")) {
          expect(dependencies, `${file}: ${specifier}`).toContain(/^(@[^/]+\/)?[^/]+/.exec(specifier!)![0])
        }
      }
    }
  })

  it("has a contract package holding only the contract's files, built from src", async () => {
    const files = await packedFiles(contractDir)
    expect(files).toContain("dist/Http/Api.js")
    expect(files).toContain("dist/Http/Api.d.ts")
    for (const file of files) {
      expect(file).not.toMatch(SERVER)
      if (file === "README.md" || file === "package.json") continue
      const source = file.replace(/^dist\//, "").replace(/\.(d\.ts|js)$/, ".ts")
      expect(isContractSource(source), file).toBe(true)
      await access(join(root, "src", source))
    }
  })

  it("packs, installs in an empty project and works there", async () => {
    for (const dir of [contractDir, clientDir]) {
      await run("npm", ["pack", "--ignore-scripts", "--pack-destination", scratch], { cwd: dir, env: npmEnv })
    }
    const tarballs = (await readdir(scratch)).filter((name) => name.endsWith(".tgz")).sort()
    expect(tarballs).toEqual(["agent-gateway-client-0.1.0.tgz", "agent-gateway-contract-0.1.0.tgz"])

    const project = join(scratch, "project")
    await run("mkdir", ["-p", project])
    await writeFile(join(project, "package.json"), JSON.stringify({ name: "empty", private: true, type: "module" }))
    // Both tarballs at once: the client's dependency on the contract is the contract's tarball.
    await run("npm", ["install", "--prefer-offline", "--no-audit", ...tarballs.map((name) => join(scratch, name))], {
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
