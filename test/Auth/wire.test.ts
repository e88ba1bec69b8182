import { afterAll, beforeAll, describe } from "vitest"
import { startIdp } from "../support/oidc.js"
import { startServer } from "../support/server.js"
import { startWorld } from "../support/world.js"
import { adminCases } from "./wire/admin.js"
import { emailSignInCases } from "./wire/emailSignIn.js"
import { idpCases } from "./wire/idp.js"
import { matrixCases } from "./wire/matrix.js"
import { secretsCases } from "./wire/secrets.js"
import { idp, logLine, serviceLogLines, useWorld, withoutIdp, world } from "./wire/world.js"

/**
 * Sign-in and who may do what, on the wire, proven once on one running service (mail, SMS,
 * an OpenID Connect provider; logging at its most verbose, for the secrets' search):
 * email and identity-provider sign-in, administrators, the permission matrix over every
 * credential, and no secret in clear in the database or the logs. The sign-in rules on
 * time are `clockRules.test.ts`'s; what only another configuration shows (production, a
 * mail server down, a second process) has its own suites.
 */
beforeAll(async () => {
  const provider = await startIdp()
  const started = await startWorld("auth_wire", {
    smtp: true,
    twilio: true,
    logLines: logLine,
    env: {
      BASE_URL: "https://app.example.test",
      LOG_LEVEL: "All",
      IDP_ISSUER: provider.issuer,
      IDP_CLIENT_ID: provider.clientId,
      IDP_CLIENT_SECRET: provider.clientSecret
    }
  })
  useWorld({ idp: provider, world: started, withoutIdp: await startServer({ DATABASE_URL: started.db.url }) })
})

afterAll(async () => {
  await withoutIdp?.close()
  await world?.close()
  await idp?.close()
  // The fork keeps this module for the suites after it: let the lines go.
  serviceLogLines.length = 0
})

// First: its search of the whole database and log holds only what it made (a six-digit code
// could otherwise meet a timestamp's digits by chance).
describe("secrets", secretsCases)
describe("administrators", adminCases)
describe("email sign-in", emailSignInCases)
describe("identity-provider sign-in", idpCases)
describe("the permission matrix", matrixCases)
