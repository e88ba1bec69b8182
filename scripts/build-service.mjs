// Builds the service and its administration command, each into one ES module that Node runs
// alone: dist/service.mjs (src/main.ts, what `npm start` runs) and dist/admin.mjs
// (scripts/admin.ts, what `npm run admin` runs). Each holds every module it imports (the
// workspace's own packages, the Stripe and x402 emulators among them); the installed
// packages stay imports. Started from the build the service is ready in about two thirds of
// the time and half the CPU a runtime transpiler (tsx) takes (docs/decisions.md, "The service
// runs from its build"). An image whose build stage made dist/ and which has no sources uses
// that build, and says so. Messages go to standard error: the admin command's output may be
// a CSV file.
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const entryPoints = { service: `${root}src/main.ts`, admin: `${root}scripts/admin.ts` }

/** Every installed package stays an import; the workspace's own (@agent-gateway/*) are bundled. */
const installedPackagesExternal = {
  name: "installed-packages-external",
  setup(build) {
    build.onResolve(
      { filter: /^[^./]/ },
      (args) => args.path.startsWith("@agent-gateway/") ? undefined : { external: true }
    )
  }
}

if (!existsSync(entryPoints.service)) {
  console.error(existsSync(`${root}dist/service.mjs`)
    ? "Service: using the built dist/ (no sources here)."
    : "Service: neither sources nor dist/ here; nothing to start.")
} else {
  const started = Date.now()
  const esbuild = await import("esbuild")
  await esbuild.build({
    entryPoints,
    outdir: `${root}dist`,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // Stack traces in logs name the sources (Node runs it with --enable-source-maps), and
    // functions and classes keep their names.
    sourcemap: true,
    keepNames: true,
    logLevel: "warning",
    plugins: [installedPackagesExternal]
  })
  console.error(`Service: built dist/service.mjs and dist/admin.mjs in ${((Date.now() - started) / 1000).toFixed(1)} s.`)
}
