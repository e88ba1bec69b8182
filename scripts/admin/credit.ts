import { SqlClient } from "@effect/sql"
import { Console, Effect } from "effect"
import { idOrNull, OrgId } from "../../src/Domain/Ids.js"
import { creditsToUsd } from "../../src/Domain/Money.js"
import { Ledger } from "../../src/Services/Ledger/Ledger.js"
import { AuditLog } from "../../src/Services/Operations/AuditLog.js"
import { type AdminCommand, CommandError, requiredOption } from "./command.js"
import { actingAdmin, OperationsLive, textOption } from "./operations.js"

/**
 * `credit --admin <email> --org <org id> --credits <whole credits> [--kind top_up|adjustment] [--note <text>]`:
 * adds credits to an org through the ledger (an entry and the balance in one transaction),
 * audited with the acting administrator. `top_up` (the default) records a payment received
 * outside the service and ends the trial's hourly spend limit, as a paid top-up does; for
 * goodwill or corrections use `adjust`, which also debits and asks for confirmation.
 */
export const credit: AdminCommand = {
  summary: "Record a top-up (or credit) through the ledger",
  usage: "credit --admin <email> --org <org id> --credits <whole credits> [--kind top_up|adjustment] [--note <text>]",
  run: (args) =>
    Effect.gen(function*() {
      const orgId = yield* requiredOption(args, "org")
      const creditsText = yield* requiredOption(args, "credits")
      if (!/^\d+$/.test(creditsText) || BigInt(creditsText) <= 0n) {
        return yield* Effect.fail(new CommandError("--credits must be a positive whole number of credits"))
      }
      if (idOrNull(OrgId, orgId) === null) {
        return yield* Effect.fail(new CommandError("--org must be an org id (UUID)"))
      }
      const kindOption = args.options.get("kind") ?? "top_up"
      if (kindOption !== "top_up" && kindOption !== "adjustment") {
        return yield* Effect.fail(new CommandError("--kind must be top_up or adjustment"))
      }
      const note = textOption(args, "note") ?? "admin credit"
      const sql = yield* SqlClient.SqlClient
      const known = yield* sql`SELECT 1 AS one FROM orgs WHERE id = ${orgId}`
      if (known.length === 0) return yield* Effect.fail(new CommandError(`No org ${orgId}`))
      const { balance } = yield* Effect.gen(function*() {
        const admin = yield* actingAdmin(args)
        const ledger = yield* Ledger
        const audit = yield* AuditLog
        return yield* sql.withTransaction(Effect.gen(function*() {
          const credited = yield* ledger.credit(OrgId.make(orgId), BigInt(creditsText), kindOption, note)
          yield* audit.record(admin, {
            action: kindOption === "top_up" ? "org.top_up" : "org.credit",
            target_type: "org",
            target_id: orgId,
            reason: note,
            after: { balance: credited.balance, credits: BigInt(creditsText) }
          })
          return credited
        }))
      }).pipe(
        Effect.catchTag("invalid_amount", (error) => Effect.fail(new CommandError(error.message))),
        Effect.scoped,
        Effect.provide(OperationsLive)
      )
      yield* Console.log(
        `Credited ${creditsText} credits (${kindOption}); balance now ${balance} credits ($${creditsToUsd(balance)})`
      )
    })
}
