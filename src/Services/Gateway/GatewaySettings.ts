import { SqlClient, SqlSchema } from "@effect/sql"
import { Cache, Clock, Config, Duration, Effect, Option, Schema } from "effect"
import { InvalidInput, NotFound, ReasonRequired } from "../../Errors/ApiErrors.js"
import { type AuditActor, AuditLog } from "../Operations/AuditLog.js"

/**
 * The gateway's runtime settings: the on/off switch (503 endpoint_unavailable while off) and
 * each provider's daily call cap. The switch is a row in `runtime_settings` read by every
 * replica through a one-second cache, so a change takes effect everywhere within a second;
 * without the row, GATEWAY_ENABLED (default true) decides. A provider's cap reaches the
 * gateway's endpoint cache within its 5 seconds.
 */
const GATEWAY_SWITCH = "gateway_enabled"

export class GatewaySettings extends Effect.Service<GatewaySettings>()("Gateway/GatewaySettings", {
  dependencies: [AuditLog.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog
    const enabledByDefault = yield* Config.boolean("GATEWAY_ENABLED").pipe(Config.withDefault(true))

    const findSwitch = SqlSchema.findOne({
      Request: Schema.Void,
      Result: Schema.Struct({ value: Schema.Boolean }),
      execute: () => sql`SELECT value FROM runtime_settings WHERE name = ${GATEWAY_SWITCH}`
    })
    const readSwitch = Effect.map(
      findSwitch(undefined).pipe(Effect.orDie),
      Option.match({ onNone: () => enabledByDefault, onSome: (row) => row.value })
    )
    const cached = yield* Cache.make({
      capacity: 1,
      timeToLive: Duration.seconds(1),
      lookup: (_: typeof GATEWAY_SWITCH) => readSwitch
    })

    /** Whether the gateway takes calls (cached for a second). */
    const gatewayEnabled = cached.get(GATEWAY_SWITCH)

    const setGatewayEnabled = (actor: AuditActor, enabled: boolean, reason: string | undefined) =>
      Effect.gen(function*() {
        const why = reason?.trim() ?? ""
        if (why.length === 0) {
          return yield* new ReasonRequired({ message: "Switching the gateway needs a written `reason`" })
        }
        const at = new Date(yield* Clock.currentTimeMillis)
        return yield* sql.withTransaction(Effect.gen(function*() {
          const before = yield* readSwitch
          yield* sql`
            INSERT INTO runtime_settings (name, value, updated_at) VALUES (${GATEWAY_SWITCH}, ${
            JSON.stringify(enabled)
          }::jsonb, ${at})
            ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`
          yield* audit.record(actor, {
            action: enabled ? "gateway.switch_on" : "gateway.switch_off",
            target_type: "gateway",
            target_id: "gateway",
            reason: why,
            before: { enabled: before },
            after: { enabled }
          })
          yield* cached.invalidate(GATEWAY_SWITCH)
          return { enabled }
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

    const findCap = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ daily_call_cap: Schema.Number }),
      execute: (providerId) => sql`SELECT daily_call_cap FROM providers WHERE id = ${providerId} FOR UPDATE`
    })

    const setProviderCap = (actor: AuditActor, providerId: string, cap: number, reason: string | undefined) =>
      Effect.gen(function*() {
        if (!Number.isSafeInteger(cap) || cap <= 0 || cap > 2_147_483_647) {
          return yield* new InvalidInput({ message: "daily_call_cap must be a whole number above 0" })
        }
        return yield* sql.withTransaction(Effect.gen(function*() {
          const found = yield* findCap(providerId)
          if (Option.isNone(found)) return yield* new NotFound({ message: `No provider ${providerId}` })
          yield* sql`UPDATE providers SET daily_call_cap = ${cap} WHERE id = ${providerId}`
          yield* audit.record(actor, {
            action: "provider.set_cap",
            target_type: "provider",
            target_id: providerId,
            reason: reason?.trim() || null,
            before: { daily_call_cap: found.value.daily_call_cap },
            after: { daily_call_cap: cap }
          })
          return { provider_id: providerId, daily_call_cap: cap }
        }))
      }).pipe(Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die }))

    return { gatewayEnabled, setGatewayEnabled, setProviderCap } as const
  })
}) {}
