/**
 * An agent without a key or an account: it pays per request from its own wallet with x402. It
 * makes one gateway call (paid `exact`, the endpoint's price) and buys one purchase (paid `upto`
 * its maximum, of which only the results that passed their check are settled), and prints what
 * each payment settled.
 *
 *     X402_ENABLED=true npm start                # the service, with its x402 facilitator emulator
 *     SERVICE_API_URL=http://localhost:8080 npx tsx examples/x402_agent.ts
 *
 * With no facilitator URL set, the service in development starts the facilitator emulator
 * (packages/x402-facilitator), which holds 1,000 test USDC for the test wallet this agent signs
 * with by default: the well-known development key, which must never hold anything real. To pay
 * from another wallet, set PAYER_PRIVATE_KEY (and fund it on the emulator: docs/x402-and-signatures.md).
 * Against a real facilitator the wallet pays in the configured network's USDC.
 *
 * Uses the TypeScript client in clients/typescript; in a project that installed its package,
 * import from "@agent-gateway/client" instead.
 */
import { TEST_WALLET_PRIVATE_KEY } from "@agent-gateway/x402-facilitator"
import { privateKeyToAccount } from "viem/accounts"
import { AgentGateway, isServiceError } from "../clients/typescript/src/index.js"

const wallet = privateKeyToAccount(
  (process.env["PAYER_PRIVATE_KEY"] as `0x${string}` | undefined) ?? TEST_WALLET_PRIVATE_KEY
)
// No key (an empty one overrides SERVICE_API_KEY): the wallet pays whenever the service answers 402.
const gateway = new AgentGateway({ payer: wallet, apiKey: "" })
console.log(`paying from ${wallet.address}`)

const call = await gateway.call({
  endpoint: process.env["X402_EXAMPLE_ENDPOINT"] ?? "hunter/email-finder",
  query: { domain: "example.com", first_name: "Ada", last_name: "Lovelace" }
})
console.log(`call ${call.call_id}: ${call.status}, price ${call.price.credits} credits`)
const paid = call.payment?.amount === undefined ? "its price" : `${call.payment.amount} units`
console.log(`  paid ${paid}: transaction ${call.payment?.transaction} on ${call.payment?.network}`)

try {
  const bought = await gateway.execute({
    tool: process.env["X402_EXAMPLE_TOOL"] ?? "apollo-people-match",
    inputs: [{ first_name: "Ada", last_name: "Lovelace", domain: "example.com" }]
  })
  if (bought.status !== "done") throw new Error("One input answers at once")
  console.log(`receipt ${bought.receipt_id}: ${bought.counts.passed} passed, charged ${bought.charged.credits} credits`)
  console.log(
    `  settled: ${bought.payment?.amount ?? "0"} units, transaction ${
      bought.payment?.transaction || "none (nothing passed)"
    }`
  )
} catch (error) {
  if (isServiceError(error, "check_failed")) console.log(`no verified result, nothing settled: ${error.message}`)
  else throw error
}
