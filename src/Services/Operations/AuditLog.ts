import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Option, Schema, Struct } from "effect"
import { AuditEntry } from "../../Domain/Operations.js"
import { NotFound } from "../../Errors/ApiErrors.js"

/**
 * The administrators' audit log: who did what to which target, why, and the target's state
 * before and after. `record` runs inside the transaction of the action it describes, so an
 * action and its line commit together or not at all. The table is append-only (a trigger
 * refuses UPDATE and DELETE) and the API only reads it.
 */
export interface AuditActor {
  readonly admin_id: string
  readonly email: string
}

export interface AuditEntryInput {
  readonly action: string
  readonly target_type: string
  readonly target_id: string
  readonly reason?: string | null
  readonly before?: unknown
  readonly after?: unknown
}

export interface AuditFilter {
  readonly admin_id?: string | undefined
  readonly action?: string | undefined
  readonly target_type?: string | undefined
  readonly target_id?: string | undefined
  readonly limit: number
  readonly starting_after?: string | undefined
}

/** Where a page starts: the last line of the previous one. */
const Cursor = Schema.Struct(Struct.pick(AuditEntry.fields, "id", "created_at"))

/** JSON for a jsonb column: bigints as decimal text. */
const jsonOf = (value: unknown) =>
  value === undefined || value === null
    ? null
    : JSON.stringify(value, (_, item) => (typeof item === "bigint" ? item.toString() : item))

export class AuditLog extends Effect.Service<AuditLog>()("Operations/AuditLog", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Writes one line; call it inside the action's transaction. */
    const record = (actor: AuditActor, entry: AuditEntryInput) =>
      Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        yield* sql`
          INSERT INTO admin_audit (id, admin_id, admin_email, action, target_type, target_id, reason, before, after,
                                   created_at)
          VALUES (gen_random_uuid(), ${actor.admin_id}, ${actor.email}, ${entry.action}, ${entry.target_type},
                  ${entry.target_id}, ${entry.reason ?? null}, ${jsonOf(entry.before)}::jsonb,
                  ${jsonOf(entry.after)}::jsonb, ${now})`
      }).pipe(Effect.asVoid, Effect.orDie)

    const findCursor = SqlSchema.findOne({
      Request: Schema.String,
      Result: Cursor,
      execute: (id) => sql`SELECT id, created_at FROM admin_audit WHERE id::text = ${id}`
    })

    const findPage = SqlSchema.findAll({
      Request: Schema.Struct({
        admin_id: Schema.NullOr(Schema.String),
        action: Schema.NullOr(Schema.String),
        target_type: Schema.NullOr(Schema.String),
        target_id: Schema.NullOr(Schema.String),
        after: Schema.NullOr(Cursor),
        limit: Schema.Number
      }),
      Result: AuditEntry,
      execute: (q) =>
        sql`
          SELECT * FROM admin_audit
          WHERE ${
          sql.and([
            q.admin_id === null ? sql`true` : sql`admin_id::text = ${q.admin_id}`,
            q.action === null ? sql`true` : sql`action = ${q.action}`,
            q.target_type === null ? sql`true` : sql`target_type = ${q.target_type}`,
            q.target_id === null ? sql`true` : sql`target_id = ${q.target_id}`,
            q.after === null ? sql`true` : sql`(created_at, id) < (${q.after.created_at}, ${q.after.id}::uuid)`
          ])
        }
          ORDER BY created_at DESC, id DESC LIMIT ${q.limit}`
    })

    /** Newest first, filtered; `starting_after` is the last id of the previous page. */
    const list = (filter: AuditFilter) =>
      Effect.gen(function*() {
        let after: typeof Cursor.Type | null = null
        if (filter.starting_after !== undefined) {
          const cursor = yield* findCursor(filter.starting_after).pipe(Effect.orDie)
          if (Option.isNone(cursor)) return yield* new NotFound({ message: "starting_after names no audit entry" })
          after = cursor.value
        }
        const page = yield* findPage({
          admin_id: filter.admin_id ?? null,
          action: filter.action ?? null,
          target_type: filter.target_type ?? null,
          target_id: filter.target_id ?? null,
          after,
          limit: filter.limit + 1
        }).pipe(Effect.orDie)
        return { entries: page.slice(0, filter.limit), has_more: page.length > filter.limit }
      })

    return { record, list } as const
  })
}) {}
