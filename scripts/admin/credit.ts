import { SqlClient } from "@effect/sql"
import { Console, Effect } from "effect"
import { isUuid, OrgId } from "../../src/Domain/Ids.js"
import { creditsToUsd } from "../../src/Domain/Money.js"
import { creditOrg, LedgerStandaloneLive } from "../../src/Services/Ledger/LedgerStandalone.js"
import { type AdminCommand, CommandError, requiredOption } from "./command.js"

/**
 * `credit --org <org id> --credits <whole credits> [--kind top_up|adjustment] [--note <text>]`:
 * adds credits to an org through the ledger (an entry and the balance in one transaction).
 * `top_up` (the default) also ends the trial's hourly spend limit, as a paid top-up does.
 */
export const credit: AdminCommand = {
  summary: "Credit an org through the ledger",
  usage: "credit --org <org id> --credits <whole credits> [--kind top_up|adjustment] [--note <text>]",
  run: (args) =>
    Effect.gen(function*() {
      const orgId = yield* requiredOption(args, "org")
      const creditsText = yield* requiredOption(args, "credits")
      if (!/^\d+$/.test(creditsText) || BigInt(creditsText) <= 0n) {
        return yield* Effect.fail(new CommandError("--credits must be a positive whole number of credits"))
      }
      if (!isUuid(orgId)) {
        return yield* Effect.fail(new CommandError("--org must be an org id (UUID)"))
      }
      const kindOption = args.options.get("kind") ?? "top_up"
      if (kindOption !== "top_up" && kindOption !== "adjustment") {
        return yield* Effect.fail(new CommandError("--kind must be top_up or adjustment"))
      }
      const note = typeof args.options.get("note") === "string" ? String(args.options.get("note")) : "admin credit"
      const sql = yield* SqlClient.SqlClient
      const known = yield* sql`SELECT 1 AS one FROM orgs WHERE id = ${orgId}`
      if (known.length === 0) return yield* Effect.fail(new CommandError(`No org ${orgId}`))
      const { balance } = yield* creditOrg(OrgId.make(orgId), BigInt(creditsText), kindOption, note).pipe(
        Effect.catchTag("invalid_amount", (error) => Effect.fail(new CommandError(error.message))),
        Effect.provide(LedgerStandaloneLive)
      )
      yield* Console.log(
        `Credited ${creditsText} credits (${kindOption}); balance now ${balance} credits ($${creditsToUsd(balance)})`
      )
    })
}
