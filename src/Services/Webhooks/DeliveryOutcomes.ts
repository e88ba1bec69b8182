import type { SqlClient, SqlError } from "@effect/sql"
import { Deferred, Effect, Queue, type Scope } from "effect"
import type { DeliveryStatus } from "../../Domain/Webhook.js"

/** One try's outcome, as its delivery row takes it. */
export interface DeliveryOutcome {
  readonly id: string
  /** The lease the try ran under: a stale worker's outcome changes nothing. */
  readonly leaseToken: string
  readonly status: DeliveryStatus
  readonly attempts: number
  readonly lastAttemptAt: Date
  readonly lastStatusCode: number | null
  readonly lastError: string | null
  readonly deliveredAt: Date | null
  readonly nextAttemptAt: Date | null
}

/** Outcomes written by one statement at most. */
const MOST_AT_ONCE = 256

/**
 * Writes the outcomes of tries together: each waits in a queue while the statement before it
 * runs, then all that waited go in one UPDATE (one round trip, one commit), and each try
 * returns once its row is written. Under a backlog that is one statement for dozens of
 * deliveries instead of one each; a lone try is written at once. Runs in `scope`.
 */
export const deliveryOutcomeWriter = (sql: SqlClient.SqlClient): Effect.Effect<
  (outcome: DeliveryOutcome) => Effect.Effect<void, SqlError.SqlError>,
  never,
  Scope.Scope
> =>
  Effect.gen(function*() {
    const waiting = yield* Queue.unbounded<readonly [DeliveryOutcome, Deferred.Deferred<void, SqlError.SqlError>]>()

    const writeAll = (outcomes: ReadonlyArray<DeliveryOutcome>) =>
      sql`
        UPDATE webhook_deliveries d
        SET status = o.status, attempts = o.attempts, last_attempt_at = o.last_attempt_at,
            last_status_code = o.last_status_code, last_error = o.last_error, delivered_at = o.delivered_at,
            next_attempt_at = o.next_attempt_at, lease_until = NULL, lease_token = NULL
        FROM unnest(
          ${outcomes.map((o) => o.id)}::uuid[], ${outcomes.map((o) => o.leaseToken)}::uuid[],
          ${outcomes.map((o) => o.status)}::text[], ${outcomes.map((o) => o.attempts)}::int[],
          ${outcomes.map((o) => o.lastAttemptAt)}::timestamptz[], ${outcomes.map((o) => o.lastStatusCode)}::int[],
          ${outcomes.map((o) => o.lastError)}::text[], ${outcomes.map((o) => o.deliveredAt)}::timestamptz[],
          ${outcomes.map((o) => o.nextAttemptAt)}::timestamptz[]
        ) AS o (id, lease_token, status, attempts, last_attempt_at, last_status_code, last_error, delivered_at,
                next_attempt_at)
        WHERE d.id = o.id AND d.lease_token = o.lease_token`

    yield* Queue.takeBetween(waiting, 1, MOST_AT_ONCE).pipe(
      Effect.flatMap((batch) =>
        writeAll(Array.from(batch, ([outcome]) => outcome)).pipe(
          Effect.asVoid,
          Effect.exit,
          Effect.flatMap((written) =>
            Effect.forEach(batch, ([, done]) => Deferred.done(done, written), { discard: true })
          )
        )
      ),
      Effect.forever,
      Effect.forkScoped
    )

    return (outcome: DeliveryOutcome) =>
      Effect.flatMap(
        Deferred.make<void, SqlError.SqlError>(),
        (done) => Queue.offer(waiting, [outcome, done]).pipe(Effect.zipRight(Deferred.await(done)))
      )
  })
