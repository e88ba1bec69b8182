// The checks `npm test` runs before the suites: the type check of the service (with the Effect
// language service's diagnostics, a patched tsc) and of the dashboard, and the lint, side by
// side (each is one process on one core; one after another they took 110 s of CI, side by side
// about 70). Each one's output is printed whole when it ends; any failure fails the checks.
import { spawn, spawnSync } from "node:child_process"

const bin = (name) => new URL(`../node_modules/.bin/${name}`, import.meta.url).pathname

const patched = spawnSync(bin("effect-language-service"), ["patch", "--log-level", "error"], { stdio: "inherit" })
if (patched.status !== 0) process.exit(patched.status ?? 1)

const checks = [
  ["type check of the service", bin("tsc"), ["--noEmit"]],
  ["type check of the dashboard", bin("tsc"), ["--noEmit", "-p", "web"]],
  ["lint", bin("eslint"), ["."]]
]

const run = ([label, command, args]) =>
  new Promise((resolve) => {
    const started = Date.now()
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] })
    const output = []
    child.stdout.on("data", (chunk) => output.push(chunk))
    child.stderr.on("data", (chunk) => output.push(chunk))
    child.on("close", (code) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1)
      process.stdout.write(`\n${label}: ${code === 0 ? "passed" : "FAILED"} in ${seconds} s\n`)
      process.stdout.write(Buffer.concat(output))
      resolve(code === 0)
    })
  })

const passed = await Promise.all(checks.map(run))
process.exit(passed.every(Boolean) ? 0 : 1)
