// The npm registry this project is built from serves only the linux-x64 builds of packages
// that ship one native build per platform. `npm install` then leaves the other platforms'
// optional packages out of package-lock.json, and `npm ci` refuses the lockfile as out of
// sync. This script writes the missing entries (version, os, cpu, libc; marked optional), as a
// lockfile made against the full registry would hold them, so `npm ci` skips them by platform.
// Run it after any `npm install` that changes the lockfile.
import { readFileSync, writeFileSync } from "node:fs"

const lockPath = new URL("../package-lock.json", import.meta.url)
const lock = JSON.parse(readFileSync(lockPath, "utf8"))
const packages = lock.packages

const platformOf = (suffix) => {
  const [os, cpu, abi] = suffix.split("-")
  const libc = abi === undefined ? undefined
    : abi.startsWith("musl") ? "musl"
    : abi.startsWith("gnu") ? "glibc"
    : undefined
  return { os, cpu, libc }
}

const families = [
  { parent: "node_modules/msgpackr-extract", prefix: "@msgpackr-extract/msgpackr-extract-" },
  { parent: "node_modules/rollup", prefix: "@rollup/rollup-" }
]

let added = 0
for (const { parent, prefix } of families) {
  const parentEntry = packages[parent]
  if (parentEntry === undefined) continue
  for (const [name, version] of Object.entries(parentEntry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`
    if (!name.startsWith(prefix) || packages[key] !== undefined) continue
    const { os, cpu, libc } = platformOf(name.slice(prefix.length))
    packages[key] = {
      version,
      cpu: [cpu],
      ...(parentEntry.dev ? { dev: true } : {}),
      ...(libc ? { libc: [libc] } : {}),
      license: "MIT",
      optional: true,
      os: [os]
    }
    added++
  }
}

lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : 1)))
writeFileSync(lockPath, JSON.stringify(lock, null, 2) + "\n")
console.log(`added ${added} platform entries`)
