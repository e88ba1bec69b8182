// Builds the owner dashboard (web/) into web/dist before the service starts or the tests
// run. An image installed without dev dependencies has no Vite: it uses the web/dist its
// build stage made, and says so.
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const built = existsSync(`${root}/web/dist/index.html`)
let vite
try {
  vite = await import(createRequire(`${root}/package.json`).resolve("vite"))
} catch {
  vite = undefined
}

if (vite === undefined) {
  console.log(built
    ? "Dashboard: using the built web/dist (Vite is not installed here)."
    : "Dashboard: not built and Vite is not installed; DASHBOARD_PATH will answer 503 until web/dist exists.")
} else {
  const started = Date.now()
  await vite.build({ configFile: `${root}/web/vite.config.ts`, logLevel: "warn" })
  console.log(`Dashboard: built web/dist in ${((Date.now() - started) / 1000).toFixed(1)} s.`)
}
