import { Console, Effect, Layer, Option } from "effect"
import { isApiError } from "../../src/Errors/Wire.js"
import { AppConfig } from "../../src/Services/AppConfig.js"
import { Admins } from "../../src/Services/Auth/Admins.js"
import { BenchmarkRuns } from "../../src/Services/Benchmarks/BenchmarkRuns.js"
import { ProviderSigning } from "../../src/Services/BotAuth/ProviderSigning.js"
import { Events } from "../../src/Services/Events/Events.js"
import { EndpointOpenings } from "../../src/Services/Gateway/EndpointOpenings.js"
import { GatewaySettings } from "../../src/Services/Gateway/GatewaySettings.js"
import { LedgerLive } from "../../src/Services/Ledger/LedgerLive.js"
import { MailOutboxLive } from "../../src/Services/Mailer/MailOutboxLive.js"
import { AuditLog } from "../../src/Services/Operations/AuditLog.js"
import { CreditAdjustments } from "../../src/Services/Operations/CreditAdjustments.js"
import { DataDeletion } from "../../src/Services/Operations/DataDeletion.js"
import { OrgPlans } from "../../src/Services/Operations/OrgPlans.js"
import { ToolAdmin } from "../../src/Services/Tools/ToolAdmin.js"
import { CommandError, type ParsedArgs, requiredOption } from "./command.js"

/**
 * What the operator commands share: the same services the /admin endpoints call (so a
 * command and its endpoint behave alike and are audited alike), the acting administrator
 * named by `--admin <email>`, and errors printed as `code: message`.
 */
export const OperationsLive = Layer.mergeAll(
  ToolAdmin.Default,
  BenchmarkRuns.Default,
  AuditLog.Default,
  CreditAdjustments.Default,
  OrgPlans.Default,
  GatewaySettings.Default,
  ProviderSigning.Default,
  EndpointOpenings.Default,
  DataDeletion.Default,
  Admins.Default
).pipe(
  Layer.provideMerge(LedgerLive),
  Layer.provide(Events.Default),
  Layer.provide(MailOutboxLive),
  Layer.provide(AppConfig.Default)
)

/** What an operation may use. */
export type OperationServices = Layer.Layer.Success<typeof OperationsLive>

/** The administrator named by `--admin <email>`, for the audit log. */
export const actingAdmin = (args: ParsedArgs) =>
  Effect.gen(function*() {
    const email = yield* requiredOption(args, "admin")
    const found = yield* Effect.flatMap(Admins, (admins) => admins.byEmail(email))
    if (Option.isNone(found)) return yield* Effect.fail(new CommandError(`No administrator ${email}`))
    return found.value
  })

/** A text option, or undefined. */
export const textOption = (args: ParsedArgs, name: string): string | undefined => {
  const value = args.options.get(name)
  return typeof value === "string" ? value : undefined
}

/** Runs an operation with the services, printing its result as JSON; service errors become `code: message`. */
export const runOperation = <A, E, R>(operation: Effect.Effect<A, E, R>) =>
  operation.pipe(
    Effect.flatMap((result) =>
      Console.log(JSON.stringify(result, (_, value) => typeof value === "bigint" ? value.toString() : value, 2))
    ),
    Effect.mapError((error) => isApiError(error) ? new CommandError(`${error._tag}: ${error.message}`) : error),
    Effect.scoped,
    Effect.provide(OperationsLive)
  )
