import { Layer } from "effect"
import { afterAll, beforeAll, describe } from "vitest"
import { ClientMetadataTrust } from "../../src/Services/OAuth/ClientMetadataDocuments.js"
import { startWorld } from "../support/world.js"
import { startDocumentServer } from "./oauthSupport.js"
import { clientMetadataDocumentsCases } from "./wire/clientMetadataDocuments.js"
import { mcpCases } from "./wire/mcp.js"
import { mcpOriginCases } from "./wire/mcpOrigin.js"
import { oauthCases } from "./wire/oauth.js"
import { oauthEdgeCases } from "./wire/oauthEdge.js"
import { clock, documents, production, useWorlds, world } from "./wire/worlds.js"

/**
 * The MCP server and its authorization server on the wire, proven once: the SDK's own
 * client over Streamable HTTP, OAuth from nothing to tool calls with the refusals the
 * specifications name, client ID metadata documents, the OAuth routes at the edge and
 * /mcp's Origin rule. One development service (mail, SMS, a data provider, a clock the
 * cases move) and, for what only production does (its Origin rule, no document from a
 * private address), one production service.
 */
beforeAll(async () => {
  const served = await startDocumentServer()
  const trust = Layer.succeed(ClientMetadataTrust, { ca: served.cert })
  useWorlds({
    documents: served,
    world: await startWorld("mcp_wire", {
      smtp: true,
      twilio: true,
      provider: true,
      clock: clock.layer,
      layer: trust,
      env: { PROVIDER_FAKEPROV_API_KEY: "fake-secret-123", OAUTH_SWEEP_INTERVAL_MS: "200" }
    }),
    production: await startWorld("mcp_wire_production", {
      smtp: true,
      layer: trust,
      env: { SERVICE_ENV: "production", SECRETS_ENCRYPTION_KEY: "test-key-for-the-mcp-wire-suite-0123456" }
    })
  })
})

afterAll(async () => {
  await world?.close()
  await production?.close()
  await documents?.close()
})

describe("the OAuth routes at the edge", oauthEdgeCases)
describe("the MCP server", mcpCases)
describe("/mcp's Origin rule in production", mcpOriginCases)
describe("client ID metadata documents", clientMetadataDocumentsCases)
// Last: its final case restarts the development service.
describe("OAuth for /mcp", oauthCases)
