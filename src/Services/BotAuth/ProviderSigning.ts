import { SqlClient } from "@effect/sql"
import { Cache, Clock, Duration, Effect } from "effect"
import { NotFound } from "../../Errors/ApiErrors.js"
import { type AuditActor, AuditLog } from "../Operations/AuditLog.js"
import { ProviderSigningRepo } from "./ProviderSigningRepo.js"

const UNSIGNED = "unsigned"
/** PostgreSQL's foreign key violation: the provider named does not exist. */
const FOREIGN_KEY_VIOLATION = "23503"

const isForeignKeyViolation = (error: { readonly cause?: unknown }) =>
  typeof error.cause === "object" && error.cause !== null && "code" in error.cause &&
  error.cause.code === FOREIGN_KEY_VIOLATION

/**
 * Whether a provider's requests are signed (Web Bot Auth): on for every provider unless an
 * administrator switched it off, e.g. for a provider that refuses requests carrying a
 * `Signature` it does not know. Every replica reads the switched-off providers through a
 * five-second cache, so a change takes effect everywhere within five seconds (at once in the
 * process that made it).
 */
export class ProviderSigning extends Effect.Service<ProviderSigning>()("BotAuth/ProviderSigning", {
  dependencies: [ProviderSigningRepo.Default, AuditLog.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* ProviderSigningRepo
    const audit = yield* AuditLog
    const cached = yield* Cache.make({
      capacity: 1,
      timeToLive: Duration.seconds(5),
      lookup: (_: typeof UNSIGNED) => repo.unsigned
    })

    /** Whether requests to the provider are signed (cached for five seconds). */
    const signs = (providerId: string) => Effect.map(cached.get(UNSIGNED), (unsigned) => !unsigned.has(providerId))

    /** Switches signing on or off for one provider, with an audit line. */
    const setSigning = (actor: AuditActor, providerId: string, on: boolean, reason: string | undefined) =>
      Effect.gen(function*() {
        const at = new Date(yield* Clock.currentTimeMillis)
        const result = yield* sql.withTransaction(Effect.gen(function*() {
          const before = yield* repo.signsNow(providerId)
          yield* repo.store(providerId, on, at)
          yield* audit.record(actor, {
            action: on ? "provider.signing_on" : "provider.signing_off",
            target_type: "provider",
            target_id: providerId,
            reason: reason?.trim() || null,
            before: { signs_requests: before },
            after: { signs_requests: on }
          })
          return { provider_id: providerId, signs_requests: on }
        }))
        yield* cached.invalidate(UNSIGNED)
        return result
      }).pipe(
        Effect.catchTag("SqlError", (error) =>
          isForeignKeyViolation(error)
            ? Effect.fail(new NotFound({ message: `No provider ${providerId}` }))
            : Effect.die(error))
      )

    return { signs, setSigning } as const
  })
}) {}
