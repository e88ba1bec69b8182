import { execFile } from "node:child_process"
import { access, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { seedAgent, seedOrg } from "../support/fixtures.js"
import { startWorld, topUp, type World } from "../support/world.js"

/**
 * The TypeScript client as its users get it: its build (the contract package's first) makes
 * one tarball holding the client's own files and the contract's built modules, no server
 * code, which installs alone in an empty project, where the example agent type-checks and
 * runs against the service and the `agent-gateway-mcp` command exists.
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

/** The modules a built file names: `from "..."`, `import "..."` and `import("...")`. */
const specifiersOf = (code: string): Array<string> =>
  [...code.matchAll(/^(?:import|export)\b[^"]*?from "([^"]+)"|^import "([^"]+)"|\bimport\("([^"]+)"\)/gm)].map(
    (match) => match[1] ?? match[2] ?? match[3]!
  )

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
  world = await startWorld("ts_package", { provider: true })
  const org = await seedOrg(world.db)
  await topUp(world, org.orgId, 1_000_000n)
  key = (await seedAgent(world.db, org.orgId, { approvalThresholdCredits: null, monthlyBudgetCredits: 10_000_000n }))
    .key
  scratch = await mkdtemp(join(tmpdir(), "agent-gateway-client-"))
  // What `npm pack` runs first (prepack): the contract's build, then the client's.
  await run("npm", ["run", "build"], { cwd: clientDir, env: npmEnv, timeout: 480_000 })
}, 540_000)

afterAll(async () => {
  await world?.close()
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true })
})

describe("the TypeScript client's package", () => {
  it("holds the client's own files, built from clients/typescript/src, and the contract's built modules", async () => {
    const sources = (await readdir(join(clientDir, "src"), { recursive: true })).filter((path) => path.endsWith(".ts"))
    expect(sources).toContain("bridge.ts")
    const contractFiles = (await packedFiles(contractDir)).filter((path) => path.startsWith("dist/"))
    expect(contractFiles).toContain("dist/Http/Api.js")
    const files = await packedFiles(clientDir)
    expect(files).toEqual(
      [
        "README.md",
        "package.json",
        ...sources.flatMap(compiled).map((path) => `dist/${path}`),
        ...contractFiles.map((path) => path.replace(/^dist\//, "dist/contract/"))
      ].sort()
    )
    for (const file of files) expect(file).not.toMatch(SERVER)
  })

  it("imports only its dependencies (the contract's among them), Node's modules and its own files", async () => {
    const manifest = JSON.parse(await readFile(join(clientDir, "package.json"), "utf8"))
    const dependencies: Record<string, string> = manifest.dependencies
    // The contract travels inside the package, so its dependencies are the client's.
    expect(Object.keys(dependencies)).not.toContain("@agent-gateway/contract")
    const contractManifest = JSON.parse(await readFile(join(contractDir, "package.json"), "utf8"))
    for (const [name, version] of Object.entries(contractManifest.dependencies)) {
      expect([name, dependencies[name]]).toEqual([name, version])
    }
    const files = await packedFiles(clientDir)
    const built = files.filter((path) => /\.(js|d\.ts)$/.test(path))
    expect(built.length).toBeGreaterThan(100)
    for (const file of built) {
      for (const specifier of specifiersOf(await readFile(join(clientDir, file), "utf8"))) {
        if (specifier.startsWith(".")) {
          const target = join(dirname(file), specifier)
          expect(files, `${file}: ${specifier}`).toContain(
            file.endsWith(".d.ts") ? target.replace(/\.js$/, ".d.ts") : target
          )
        } else if (!specifier.startsWith("node:")) {
          expect(Object.keys(dependencies), `${file}: ${specifier}`).toContain(/^(@[^/]+\/)?[^/]+/.exec(specifier)![0])
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

  it("installs alone from its tarball in an empty project, where the example agent type-checks and runs", async () => {
    await run("npm", ["pack", "--ignore-scripts", "--pack-destination", scratch], { cwd: clientDir, env: npmEnv })
    const tarballs = (await readdir(scratch)).filter((name) => name.endsWith(".tgz"))
    expect(tarballs).toEqual(["agent-gateway-client-0.1.0.tgz"])

    const project = join(scratch, "project")
    await mkdir(project)
    await writeFile(join(project, "package.json"), JSON.stringify({ name: "empty", private: true, type: "module" }))
    await run("npm", ["install", "--prefer-offline", "--no-audit", join(scratch, tarballs[0]!)], {
      cwd: project,
      env: npmEnv,
      timeout: 180_000
    })
    await expect(access(join(project, "node_modules", "@agent-gateway", "contract"))).rejects.toThrow()
    await access(join(project, "node_modules", ".bin", "agent-gateway-mcp"))

    // The example as a user writes it in their project: the client by its package's name.
    const example = await readFile(join(root, "examples/typescript_agent.ts"), "utf8")
    const inRepository = `"../clients/typescript/src/index.js"`
    expect(example.split(inRepository)).toHaveLength(2)
    await writeFile(join(project, "agent.ts"), example.replace(inRepository, `"@agent-gateway/client"`))
    await writeFile(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noUncheckedIndexedAccess: true,
          types: [],
          outDir: "out"
        },
        files: ["agent.ts"]
      })
    )
    // The installed declarations are checked too (no skipLibCheck): a module they name is there.
    await run(join(root, "node_modules/.bin/tsc"), ["-p", project], { cwd: project, timeout: 240_000 }).catch(
      (failure: { stdout: string }) => {
        throw new Error(`The example does not type-check against the installed package:\n${failure.stdout}`)
      }
    )
    const { stdout } = await run("node", ["out/agent.js"], {
      cwd: project,
      env: { PATH: process.env["PATH"] ?? "", SERVICE_API_KEY: key, SERVICE_API_URL: world.server.url },
      timeout: 60_000
    })
    expect(stdout).toMatch(/^best tool: \S+/m)
    expect(stdout).toMatch(/^receipt [0-9a-f-]{36}: (passed|partial), charged \d+ credits$/m)
    expect(stdout).toMatch(/^signature verified: key \S+$/m)
  }, 600_000)
})
