/**
 * An agent that buys a verified email address: recommend, execute, read the receipt and check
 * its signature.
 *
 *     SERVICE_API_KEY=sk_test_... SERVICE_API_URL=http://localhost:8080 npx tsx examples/typescript_agent.ts
 *
 * Uses the TypeScript client in clients/typescript; in a project that installed its package,
 * import from "@agent-gateway/client" instead.
 */
import { AgentGateway, isServiceError, verifyReceipt } from "../clients/typescript/src/index.js"

const gateway = new AgentGateway()
const { tools } = await gateway.recommend({ task_type: "email_find" })
const tool = tools.find((candidate) => candidate.purchasable)
if (tool === undefined) throw new Error("No tool on sale for email_find")
console.log(`best tool: ${tool.slug} (score ${tool.score})`)

try {
  const bought = await gateway.execute({
    tool: tool.slug,
    inputs: [{ first_name: "Jane", last_name: "Doe", domain: "acme.com" }],
    max_price: 1_000
  })
  if (bought.status !== "done") throw new Error("One input answers at once")
  const receipt = await gateway.receipt(bought.receipt_id)
  console.log(`receipt ${receipt.id}: ${receipt.items[0]!.status}, charged ${receipt.charged_credits} credits`)
  const { kid } = await verifyReceipt(receipt) // with the keys the service at SERVICE_API_URL publishes
  console.log(`signature verified: key ${kid}`)
  console.log(`result: ${JSON.stringify(bought.items[0]!.result)}`)
} catch (error) {
  if (isServiceError(error, "check_failed")) console.log(`no verified result, nothing charged: ${error.message}`)
  else if (isServiceError(error, "approval_required")) console.log("an owner must approve this purchase first")
  else throw error
}
