import { afterAll, beforeAll, describe } from "vitest"
import { startWorld } from "../support/world.js"
import { membersCases } from "./wire/members.js"
import { orgKeysCases } from "./wire/orgKeys.js"
import { phoneAndOrgsCases } from "./wire/phoneAndOrgs.js"
import { useWorld, world } from "./wire/world.js"

/**
 * The org routes on the wire, proven once on one running service (with a mail server and an
 * SMS gateway): invitations, members and roles, phone verification, creating and switching
 * orgs, org keys; statuses, bodies and error codes.
 */
beforeAll(async () => {
  useWorld(await startWorld("orgs_wire", { smtp: true, twilio: true, env: { BASE_URL: "https://app.example.test" } }))
})

afterAll(async () => {
  await world?.close()
})

describe("members", membersCases)
describe("phone and orgs", phoneAndOrgsCases)
describe("org keys", orgKeysCases)
