import { Clock, Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import { ReceiptId, ReceiptItemId } from "../../Domain/Ids.js"
import type { PurchaseItem } from "../../Domain/PurchaseItem.js"
import type { ExecuteRequest } from "../../Domain/Purchasing.js"
import { InvalidInput, LiveExecuteUnavailable, UnknownTool } from "../../Errors/ApiErrors.js"
import { AppConfig } from "../AppConfig.js"
import { ToolsRepo } from "../Tools/ToolsRepo.js"
import { directAnswer } from "./Answers.js"
import { sha256OfCanonical } from "./Canonical.js"
import { choiceOf, ItemRunner, type PurchaseContext } from "./ItemRunner.js"
import { type PurchaseTerms, purchaseTerms } from "./PurchaseTerms.js"
import { PurchasingConfig, purchasingRules } from "./PurchasingConfig.js"

/**
 * Purchases by a keyless payer (x402, Services/X402): the same tool, terms, runner and
 * published checks as an agent's purchase, with no org, no ledger and no rows here: the
 * payer's payment authorises the purchase's maximum and its records keep the outcome.
 *
 * What differs, and why (docs/decisions.md, "x402 on the service"):
 * - live, so in production LIVE_EXECUTE_ENABLED must be on, as for a live agent (in
 *   development they are open, so `X402_ENABLED=true npm start` shows a purchase too: its
 *   facilitator is the emulator and its providers, without DATABASE_URL, the sandbox);
 * - direct only (at most 25 inputs): a job may outlive the payment's authorisation;
 * - no approvals (nobody to ask), no `fallback` (the price authorised is the tool's), and no
 *   provider daily caps or people-lookup limit, which are counted per org (the payer's own
 *   per-address limits stand in).
 */
export interface PayerQuote {
  readonly request: ExecuteRequest
  readonly terms: PurchaseTerms
  readonly context: PurchaseContext
}

export class PayerPurchases extends Effect.Service<PayerPurchases>()("Purchasing/PayerPurchases", {
  dependencies: [ToolsRepo.Default, ItemRunner.Default, PurchasingConfig.Default],
  effect: Effect.gen(function*() {
    const toolRows = yield* ToolsRepo
    const items = yield* ItemRunner
    const config = yield* PurchasingConfig
    const app = yield* AppConfig

    /** The purchase's terms: its maximum is the price of every input passing. Nothing runs. */
    const quote = (request: ExecuteRequest) =>
      Effect.gen(function*() {
        const count = request.inputs.length
        if (count < 1 || count > purchasingRules.directLimit) {
          return yield* new InvalidInput({
            message: `A paid purchase without a key takes 1 to ${purchasingRules.directLimit} inputs (got ${count})`
          })
        }
        if (request.fallback === true || request.approval_id !== undefined) {
          return yield* new InvalidInput({
            message: "`fallback` and `approval_id` need an agent key; a paid purchase without one buys the tool named"
          })
        }
        if (!config.liveExecuteEnabled && app.isProduction) {
          return yield* new LiveExecuteUnavailable({ message: "Live purchases are not open yet" })
        }
        const found = yield* toolRows.byRef(request.tool)
        if (Option.isNone(found)) {
          return yield* new UnknownTool({ message: `No tool with id or slug ${JSON.stringify(request.tool)}` })
        }
        const tool = found.value
        const terms = yield* purchaseTerms(tool, request, { now: new Date(yield* Clock.currentTimeMillis) })
        const context: PurchaseContext = {
          receiptId: ReceiptId.make(randomUUID()),
          orgId: null,
          mode: "live",
          tool: choiceOf(tool, terms.price),
          fallback: false,
          fallbacks: []
        }
        return { request, terms, context } satisfies PayerQuote
      })

    /**
     * Runs every input at once and checks each result; answers the purchase's answer (as an
     * agent's direct purchase answers it) and its items.
     */
    const run = (quoted: PayerQuote) =>
      Effect.gen(function*() {
        const started = new Date(yield* Clock.currentTimeMillis)
        const outcomes = yield* Effect.forEach(
          quoted.request.inputs,
          (input) => items.outcomeOf(quoted.context, input),
          { concurrency: "unbounded" }
        )
        const finished = new Date(yield* Clock.currentTimeMillis)
        const rows: Array<PurchaseItem> = outcomes.map((outcome, idx) => ({
          ...outcome,
          id: ReceiptItemId.make(randomUUID()),
          receipt_id: quoted.context.receiptId,
          idx,
          input: { ...quoted.request.inputs[idx]! },
          hold_id: null,
          refunded_credits: 0n,
          runs: 1,
          claimed_by: null,
          claimed_until: null,
          started_at: started,
          finished_at: finished
        }))
        const answer = yield* Effect.either(directAnswer(quoted.context, rows))
        return {
          answer,
          items: rows.map((row) => ({
            idx: row.idx,
            status: row.status,
            cost_credits: row.cost_credits,
            input_sha256: sha256OfCanonical(row.input),
            result_hash: row.result_hash,
            check: row.check_id === null ? null : { id: row.check_id, version: row.check_version },
            error_code: row.error_code
          })),
          charged: rows.reduce((sum, row) => sum + row.cost_credits, 0n),
          startedAt: started,
          finishedAt: finished
        }
      })

    return { quote, run } as const
  })
}) {}
