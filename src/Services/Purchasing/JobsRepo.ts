import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"

/**
 * Purchase jobs: large orders run in the background under a renewable lease.
 * Money columns come back as strings of digits (bigint), timestamps as Dates, jsonb parsed.
 */
export interface JobRow {
  readonly id: string
  readonly receipt_id: string
  readonly org_id: string
  readonly agent_id: string
  readonly status: "queued" | "running" | "done"
  readonly deadline_at: Date
  readonly lease_owner: string | null
  readonly lease_until: Date | null
  readonly created_at: Date
  readonly started_at: Date | null
  readonly completed_at: Date | null
}

const first = <A>(rows: ReadonlyArray<A>) => Option.fromNullable(rows[0])

export class JobsRepo extends Effect.Service<JobsRepo>()("Purchasing/JobsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertJob = (row: Omit<JobRow, "lease_owner" | "lease_until" | "started_at" | "completed_at">) =>
      sql`INSERT INTO purchase_jobs ${
        sql.insert({ ...row, lease_owner: null, lease_until: null, started_at: null, completed_at: null })
      }`.pipe(Effect.asVoid, Effect.orDie)

    /** Takes the oldest job nobody holds a live lease on. */
    const claimJob = (owner: string, now: Date, until: Date) =>
      sql<JobRow>`
        UPDATE purchase_jobs SET status = 'running', lease_owner = ${owner}, lease_until = ${until},
          started_at = COALESCE(started_at, ${now})
        WHERE id = (
          SELECT id FROM purchase_jobs
          WHERE status <> 'done' AND (lease_until IS NULL OR lease_until < ${now})
          ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING *`.pipe(Effect.map(first), Effect.orDie)

    const renewJobLease = (jobId: string, owner: string, until: Date) =>
      sql<{ id: string }>`
        UPDATE purchase_jobs SET lease_until = ${until}
        WHERE id = ${jobId} AND lease_owner = ${owner} AND status <> 'done' RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )

    const releaseJobLease = (jobId: string, owner: string) =>
      sql`UPDATE purchase_jobs SET lease_owner = NULL, lease_until = NULL WHERE id = ${jobId} AND lease_owner = ${owner}`
        .pipe(Effect.asVoid, Effect.orDie)

    const lockJobForCompletion = (jobId: string, owner: string) =>
      sql<JobRow>`
        SELECT * FROM purchase_jobs WHERE id = ${jobId} AND lease_owner = ${owner} AND status <> 'done' FOR UPDATE`
        .pipe(
          Effect.map(first),
          Effect.orDie
        )

    const completeJob = (jobId: string, now: Date) =>
      sql`
        UPDATE purchase_jobs SET status = 'done', completed_at = ${now}, lease_owner = NULL, lease_until = NULL
        WHERE id = ${jobId}`.pipe(Effect.asVoid, Effect.orDie)

    const job = (orgId: string, jobId: string) =>
      sql<JobRow>`SELECT * FROM purchase_jobs WHERE id = ${jobId} AND org_id = ${orgId}`.pipe(
        Effect.map(first),
        Effect.orDie
      )

    return {
      insertJob,
      claimJob,
      renewJobLease,
      releaseJobLease,
      lockJobForCompletion,
      completeJob,
      job
    } as const
  })
}) {}
