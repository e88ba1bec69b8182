import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // One migrated and seeded database made once a run, which every suite's database copies.
    globalSetup: ["test/support/globalSetup.ts"],
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ["default"]
  }
})
