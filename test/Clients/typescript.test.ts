import { afterAll, beforeAll, describe } from "vitest"
import { startWorld } from "../support/world.js"
import { bridgeCases } from "./typescript/bridge.js"
import { clientCases } from "./typescript/client.js"
import { verifyReceiptCases } from "./typescript/verifyReceipt.js"
import { useWorld, world } from "./typescript/world.js"

/**
 * The TypeScript client (clients/typescript) against one running service on real PostgreSQL
 * with a data provider beside it: the client itself and its retry rules, `verifyReceipt`, and
 * the MCP stdio bridge as a child process.
 */
beforeAll(async () => {
  useWorld(await startWorld("ts_client", { provider: true }))
}, 120_000)

afterAll(async () => {
  await world?.close()
})

describe("the client", clientCases)
describe("verifyReceipt", verifyReceiptCases)
// Last: its final case stops the service to prove the bridge's connection_failed.
describe("the MCP stdio bridge", bridgeCases)
