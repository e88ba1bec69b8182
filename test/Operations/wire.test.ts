import { afterAll, beforeAll, describe } from "vitest"
import { startWorld } from "../support/world.js"
import { benchmarksCases } from "./wire/benchmarks.js"
import { cliCases } from "./wire/cli.js"
import { deletionCases } from "./wire/deletion.js"
import { orgsCases } from "./wire/orgs.js"
import { toolsCases } from "./wire/tools.js"
import { useWorld, world } from "./wire/world.js"

/**
 * The operator's side on the wire, proven once on one running service (a data provider, mail
 * and SMS): the /admin routes for orgs, tools and benchmarks and the admin command line beside
 * them, all audited, and carrying out a data-deletion request. The rules on time are the
 * services' suites': the benchmark schedule (`benchmarkSchedule.test.ts`) and a benchmark
 * aging out (`toolAging.test.ts`).
 */
beforeAll(async () => {
  useWorld(
    await startWorld("operations_wire", {
      provider: true,
      smtp: true,
      twilio: true,
      // fakebody's credential is left unset and firecrawl's blank, for the adapter gate's refusals.
      env: {
        PROVIDER_FAKEPROV_API_KEY: "fakeprov-secret-tools",
        PROVIDER_HUNTER_API_KEY: "hunter-secret-tools",
        PROVIDER_FIRECRAWL_API_KEY: "  ",
        ADJUSTMENT_CONFIRM_CREDITS: "1000000"
      }
    })
  )
})

afterAll(async () => {
  await world?.close()
})

describe("the admin command line", cliCases)
describe("data deletion", deletionCases)
describe("orgs", orgsCases)
describe("benchmarks", benchmarksCases)
// Last: it pauses, publishes and reprices tools.
describe("tools", toolsCases)
