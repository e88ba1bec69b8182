import { afterAll, beforeAll, describe } from "vitest"
import { startWorld } from "../support/world.js"
import { bridgeCases } from "./typescript/bridge.js"
import { clientCases } from "./typescript/client.js"
import { pythonCases } from "./typescript/python.js"
import { verifyReceiptCases } from "./typescript/verifyReceipt.js"
import { useWorld, world } from "./typescript/world.js"

/**
 * The clients against one running service on real PostgreSQL with a data provider beside it:
 * the TypeScript client (clients/typescript) and its retry rules, `verifyReceipt`, the Python
 * client (clients/python) and the MCP stdio bridge as a child process. The TypeScript
 * package's suite (`package.test.ts`) builds and installs the package, apart.
 */
beforeAll(async () => {
  useWorld(await startWorld("ts_client", { provider: true }))
}, 120_000)

afterAll(async () => {
  await world?.close()
})

describe("the client", clientCases)
describe("verifyReceipt", verifyReceiptCases)
describe("the Python client", pythonCases)
// Last: its final case stops the service to prove the bridge's connection_failed.
describe("the MCP stdio bridge", bridgeCases)
