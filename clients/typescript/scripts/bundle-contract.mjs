// Carries the contract inside the client's package, so installing the client takes one
// tarball (docs/decisions.md, "The client's package carries the contract"): the contract's
// built modules (packages/contract/dist) are copied to dist/contract, and every
// `@agent-gateway/contract/<module>` the client's built code and declarations name becomes a
// relative path to that copy. A name whose module the contract did not build fails the build.
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const clientDir = fileURLToPath(new URL("..", import.meta.url))
const dist = join(clientDir, "dist")
const contractBuild = join(clientDir, "../../packages/contract/dist")
const bundled = join(dist, "contract")

if (!existsSync(contractBuild)) throw new Error(`${contractBuild} is missing: build packages/contract first`)
rmSync(bundled, { recursive: true, force: true })
cpSync(contractBuild, bundled, { recursive: true })

const contractName = /(["'])@agent-gateway\/contract\/([^"']+)\1/g
const missing = []
for (const entry of readdirSync(dist, { recursive: true })) {
  const file = join(dist, entry)
  if (file.startsWith(bundled + "/") || !/\.(js|d\.ts)$/.test(file)) continue
  const code = readFileSync(file, "utf8")
  const rewritten = code.replace(contractName, (_, quote, module) => {
    const declared = file.endsWith(".d.ts") ? module.replace(/\.js$/, ".d.ts") : module
    if (!existsSync(join(bundled, declared))) missing.push(`${entry}: @agent-gateway/contract/${module}`)
    const path = relative(dirname(file), join(bundled, module))
    return `${quote}${path.startsWith(".") ? path : `./${path}`}${quote}`
  })
  if (rewritten !== code) writeFileSync(file, rewritten)
}
if (missing.length > 0) throw new Error(`Not in the contract's build:\n${missing.join("\n")}`)
