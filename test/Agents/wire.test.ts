import { afterAll, beforeAll, describe } from "vitest"
import { startServer } from "../support/server.js"
import { startWorld } from "../support/world.js"
import { agentsCases } from "./wire/agents.js"
import { allowlistCases } from "./wire/allowlist.js"
import { usageCases } from "./wire/usage.js"
import { untrusting, useWorld, world } from "./wire/world.js"

/**
 * The agent routes on the wire, proven once on one running service (with a mail server and
 * an SMS gateway, X-Forwarded-For trusted from loopback): agents and their keys, limits and
 * allowlists, the owner's usage and exports and the refusals the edge counts for them;
 * statuses, bodies and error codes. A second service without a trusted proxy
 * proves that only the socket peer counts there.
 */
beforeAll(async () => {
  const started = await startWorld("agents_wire", { smtp: true, twilio: true })
  useWorld(started, await startServer({ DATABASE_URL: started.db.url }))
})

afterAll(async () => {
  await untrusting?.close()
  await world?.close()
})

describe("agents", agentsCases)
describe("allowlists", allowlistCases)
describe("usage, exports and refusals at the edge", usageCases)
