import { defineConfig } from "vitest/config"

export default defineConfig({
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
