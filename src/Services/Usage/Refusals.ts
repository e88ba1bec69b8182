import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, FiberRef, Option, Schedule } from "effect"
import { dayOf } from "../Ledger/Time.js"

/**
 * Refusals an owner can see: the limits and settings that stopped an agent's request (its
 * allowlist, a disabled agent or an old key, trial limit, budget, balance, quotas, live
 * purchases closed...), counted per agent, per UTC day and per code, with the latest one's
 * time and message (`agent_refusals`).
 *
 * Every error leaving an agent route is offered here at the edge
 * (Http/Middleware/AgentRefusals.ts, through `countFailure`); the gateway, purchases and the
 * agent authentication also record theirs where they happen. A request's refusal is counted
 * once: the edge skips one its request already counted (`requestRefusal`). Recording writes nothing on the request's path: `record` adds to a
 * count in memory (a map update), and a fiber of the service writes every count gathered in
 * the last second in one statement. What that costs and risks: one upsert a second while
 * refusals happen (none otherwise); counts of the last second before a crash are lost (a
 * clean stop writes them).
 */

/**
 * The refusals recorded: what an owner can act on. Other errors (bad input, a provider
 * failing, an unknown key) are not; `unauthenticated` is counted only when the key is (or
 * was) the agent's own: the agent is disabled, or its key was rotated or revoked.
 */
export const REFUSAL_CODES = [
  "ip_not_allowed",
  "unauthenticated",
  "trial_limit",
  "over_budget",
  "insufficient_credits",
  "credits_frozen",
  "live_execute_unavailable",
  "provider_quota",
  "aup_limit",
  "rate_limited",
  "plan_limit",
  "price_above_max",
  "approval_rejected",
  "approval_expired",
  "not_purchasable",
  "tool_paused",
  "endpoint_on_request",
  "endpoint_unavailable"
] as const
export type RefusalCode = (typeof REFUSAL_CODES)[number]
const refusalCodes: ReadonlySet<string> = new Set(REFUSAL_CODES)

/** The agent a refusal is counted against. */
export interface RefusedAgent {
  readonly id: string
  readonly org_id: string
}

/** Whether the request under way has had its refusal counted (set by `record`, read by `countFailure`). */
interface RequestRefusal {
  counted: boolean
}
const requestRefusal = FiberRef.unsafeMake<RequestRefusal | undefined>(undefined)

/** How often gathered counts are written. */
export const REFUSAL_FLUSH_EVERY = Duration.seconds(1)

interface Pending {
  readonly org_id: string
  readonly agent_id: string
  readonly day: string
  readonly code: string
  count: number
  last_at: string
  last_message: string
}

/** The code of an API error (its tag is its code), when it is a refusal worth counting. */
const refusalOf = (error: unknown): { readonly code: string; readonly message: string } | null => {
  const tag = (error as { readonly _tag?: unknown } | null)?._tag
  return typeof tag === "string" && refusalCodes.has(tag)
    ? { code: tag, message: String((error as { readonly message?: unknown }).message ?? tag) }
    : null
}

export class Refusals extends Effect.Service<Refusals>()("Usage/Refusals", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    let pending = new Map<string, Pending>()

    const add = (into: Map<string, Pending>, row: Pending) => {
      const key = `${row.agent_id}/${row.day}/${row.code}`
      const seen = into.get(key)
      if (seen === undefined) {
        into.set(key, { ...row })
      } else {
        seen.count += row.count
        if (row.last_at >= seen.last_at) {
          seen.last_at = row.last_at
          seen.last_message = row.last_message
        }
      }
    }

    // One write at a time: a reader's flush waits for the periodic write already under way,
    // so counts taken out of `pending` are in the table by the time the reader looks.
    const writing = yield* Effect.makeSemaphore(1)

    /**
     * Writes the gathered counts in one statement. Rows of an agent deleted meanwhile are
     * skipped; when the write fails the counts wait for the next one.
     */
    const flush = writing.withPermits(1)(Effect.suspend(() => {
      if (pending.size === 0) return Effect.void
      const rows = [...pending.values()]
      pending = new Map()
      return sql`
        INSERT INTO agent_refusals (org_id, agent_id, day, code, count, last_at, last_message)
        SELECT v.org_id, v.agent_id, v.day, v.code, v.count, v.last_at, v.last_message
        FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
          AS v(org_id uuid, agent_id uuid, day date, code text, count bigint, last_at timestamptz, last_message text)
        WHERE EXISTS (SELECT 1 FROM agents a WHERE a.id = v.agent_id)
        ON CONFLICT (agent_id, day, code) DO UPDATE SET
          count = agent_refusals.count + excluded.count,
          last_message = CASE WHEN excluded.last_at >= agent_refusals.last_at
            THEN excluded.last_message ELSE agent_refusals.last_message END,
          last_at = greatest(agent_refusals.last_at, excluded.last_at)`.pipe(
        Effect.asVoid,
        Effect.catchAll((error) =>
          Effect.zipRight(
            Effect.sync(() => rows.forEach((row) => add(pending, row))),
            Effect.logWarning("Refusal counts not written; kept for the next write", error)
          )
        )
      )
    }))

    yield* Effect.addFinalizer(() => flush)
    yield* flush.pipe(Effect.repeat(Schedule.spaced(REFUSAL_FLUSH_EVERY)), Effect.forkScoped)

    /**
     * Counts `error` against the agent when it is a refusal (for `Effect.tapError`); any
     * other error passes unrecorded.
     */
    const record = (agent: RefusedAgent) => (error: unknown) => {
      const refusal = refusalOf(error)
      return refusal === null ?
        Effect.void :
        Effect.flatMap(
          Effect.zip(Clock.currentTimeMillis, FiberRef.get(requestRefusal)),
          ([ms, request]) =>
            Effect.sync(() => {
              if (request !== undefined) request.counted = true
              add(pending, {
                org_id: agent.org_id,
                agent_id: agent.id,
                day: dayOf(ms),
                code: refusal.code,
                count: 1,
                last_at: new Date(ms).toISOString(),
                last_message: refusal.message
              })
            })
        )
    }

    /**
     * Runs `request` (one agent request), counting the refusal it fails with once: unless
     * the code that refused it counted it already, against the agent `ownerOf` names (none:
     * not counted). `ownerOf` runs only for a refusal, so a request that succeeds pays nothing.
     */
    const countFailure = <A, E, R, R2>(
      request: Effect.Effect<A, E, R>,
      ownerOf: (error: E) => Effect.Effect<Option.Option<RefusedAgent>, never, R2>
    ) =>
      Effect.suspend(() => {
        const seen: RequestRefusal = { counted: false }
        return request.pipe(
          Effect.tapError((error) =>
            seen.counted || refusalOf(error) === null ? Effect.void : Effect.flatMap(
              ownerOf(error),
              Option.match({ onNone: () => Effect.void, onSome: (agent) => record(agent)(error) })
            )
          ),
          Effect.locally(requestRefusal, seen)
        )
      })

    return { record, countFailure, flush } as const
  })
}) {}
