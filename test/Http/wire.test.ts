import { afterAll, beforeAll, describe } from "vitest"
import { startWorld } from "../support/world.js"
import { badInputCases } from "./wire/badInput.js"
import { billingUnconfiguredCases } from "./wire/billingUnconfigured.js"
import { catalogueCases } from "./wire/catalogue.js"
import { crossSiteCases } from "./wire/crossSite.js"
import { edgeCases } from "./wire/edge.js"
import { frontDoorCases } from "./wire/frontDoor.js"
import { keyDirectoryCases } from "./wire/keyDirectory.js"
import { malformedRequestsCases } from "./wire/malformedRequests.js"
import { openapiLintCases } from "./wire/openapiLint.js"
import { pathIdsCases } from "./wire/pathIds.js"
import { publicCases } from "./wire/public.js"
import { securityHeadersCases } from "./wire/securityHeaders.js"
import { signingKeysCases } from "./wire/signingKeys.js"
import { base, production, productionBase, useWorlds, world } from "./wire/world.js"

/**
 * The edge's wire contract, proven once on one running service (development, with a mail
 * server and an SMS gateway for the people the cases sign in): statuses, the common error
 * body, headers, the front door, the public documents, the catalogue route, the request signing
 * key directory, the records' signing keys, cross-site refusals, path ids and malformed requests
 * to every operation. Production's own headers are proven beside it on a production service
 * without Stripe keys (`securityHeaders`), and its billing endpoints' refusals
 * (`billingUnconfigured`). The rules behind the routes are their services' suites'.
 */
beforeAll(async () => {
  useWorlds({
    world: await startWorld("http_wire", { smtp: true, twilio: true, env: { BASE_URL: base } }),
    production: await startWorld("http_wire_production", {
      smtp: true,
      env: {
        BASE_URL: productionBase,
        SERVICE_ENV: "production",
        SECRETS_ENCRYPTION_KEY: "test-key-for-the-headers-suite-01234"
      }
    })
  })
}, 180_000)

afterAll(async () => {
  await world?.close()
  await production?.close()
})

describe("the front door", frontDoorCases)
describe("public data and documents", publicCases)
describe("the request signing key directory", keyDirectoryCases)
describe("the gateway catalogue", catalogueCases)
describe("the OpenAPI document's lint", openapiLintCases)
describe("the records' signing keys", signingKeysCases)
describe("built-in failures", edgeCases)
describe("bad input", badInputCases)
describe("path ids", pathIdsCases)
describe("security headers", securityHeadersCases)
describe("billing in production without Stripe keys", billingUnconfiguredCases)
describe("cross-site requests", crossSiteCases)
// Last: thousands of generated requests with every credential, some of which may change state.
describe("malformed requests", malformedRequestsCases)
