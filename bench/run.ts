/**
 * `npm run bench`: runs every benchmark in turn (or only those named on the command line,
 * e.g. `npm run bench -- publicEndpoint`). Each prints its own figures.
 */
const benchmarks: Record<string, () => Promise<{ run: () => Promise<void> }>> = {
  publicEndpoint: () => import("./publicEndpoint.js"),
  webhooks: () => import("./webhooks.js"),
  execute: () => import("./execute.js"),
  gateway: () => import("./gateway.js"),
  busyOrg: () => import("./busyOrg.js"),
  replicas: () => import("./replicas.js"),
  observability: () => import("./observability.js"),
  autoReload: () => import("./autoReload.js"),
  cluster: () => import("./cluster.js")
}

const selected = process.argv.slice(2)
for (const [name, load] of Object.entries(benchmarks)) {
  if (selected.length > 0 && !selected.includes(name)) continue
  console.log(`\n=== ${name} ===`)
  await (await load()).run()
}
