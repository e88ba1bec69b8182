import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

export default defineConfig({
  // The contract package's subpaths are its sources here, the very modules the service runs.
  resolve: {
    alias: [{
      find: /^@agent-gateway\/contract\/(.*)\.js$/,
      replacement: `${fileURLToPath(new URL("src", import.meta.url))}/$1.ts`
    }]
  },
  test: {
    include: ["test/**/*.test.ts"],
    // One migrated and seeded database made once a run, which every suite's database copies.
    globalSetup: ["test/support/globalSetup.ts"],
    pool: "forks",
    // One fork a core. A fork keeps its modules from one suite to the next (each suite still
    // has its own database and service): importing the service anew for each of some ninety
    // suites cost more than a third of the run.
    poolOptions: { forks: { maxForks: 2, minForks: 1, isolate: false } },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ["default"]
  }
})
