import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { AgentId, JobId, OrgId, ReceiptId } from "../../Domain/Ids.js"

/** Purchase jobs: large orders run in the background under a renewable lease; rows decoded. */
export const JobRow = Schema.Struct({
  id: JobId,
  receipt_id: ReceiptId,
  org_id: OrgId,
  agent_id: AgentId,
  status: Schema.Literal("queued", "running", "done"),
  deadline_at: Schema.DateFromSelf,
  lease_owner: Schema.NullOr(Schema.String),
  lease_until: Schema.NullOr(Schema.DateFromSelf),
  created_at: Schema.DateFromSelf,
  started_at: Schema.NullOr(Schema.DateFromSelf),
  completed_at: Schema.NullOr(Schema.DateFromSelf)
})
export type JobRow = typeof JobRow.Type

export class JobsRepo extends Effect.Service<JobsRepo>()("Purchasing/JobsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertJob = (row: Omit<JobRow, "lease_owner" | "lease_until" | "started_at" | "completed_at">) =>
      sql`INSERT INTO purchase_jobs ${
        sql.insert({ ...row, lease_owner: null, lease_until: null, started_at: null, completed_at: null })
      }`.pipe(Effect.asVoid, Effect.orDie)

    const claimOldest = SqlSchema.findOne({
      Request: Schema.Struct({ owner: Schema.String, now: Schema.DateFromSelf, until: Schema.DateFromSelf }),
      Result: JobRow,
      execute: ({ now, owner, until }) =>
        sql`
          UPDATE purchase_jobs SET status = 'running', lease_owner = ${owner}, lease_until = ${until},
            started_at = COALESCE(started_at, ${now})
          WHERE id = (
            SELECT id FROM purchase_jobs
            WHERE status <> 'done' AND (lease_until IS NULL OR lease_until < ${now})
            ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
          RETURNING *`
    })
    /** Takes the oldest job nobody holds a live lease on. */
    const claimJob = (owner: string, now: Date, until: Date) => claimOldest({ owner, now, until }).pipe(Effect.orDie)

    const renewJobLease = (jobId: string, owner: string, until: Date) =>
      sql`
        UPDATE purchase_jobs SET lease_until = ${until}
        WHERE id = ${jobId} AND lease_owner = ${owner} AND status <> 'done' RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )

    const releaseJobLease = (jobId: string, owner: string) =>
      sql`UPDATE purchase_jobs SET lease_owner = NULL, lease_until = NULL WHERE id = ${jobId} AND lease_owner = ${owner}`
        .pipe(Effect.asVoid, Effect.orDie)

    /** Gives back every job lease `owner` holds (a worker whose run failed half-way). */
    const releaseLeasesOf = (owner: string) =>
      sql`UPDATE purchase_jobs SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = ${owner} AND status <> 'done'`
        .pipe(Effect.asVoid, Effect.orDie)

    const findForCompletion = SqlSchema.findOne({
      Request: Schema.Struct({ jobId: Schema.String, owner: Schema.String }),
      Result: JobRow,
      execute: ({ jobId, owner }) =>
        sql`SELECT * FROM purchase_jobs WHERE id = ${jobId} AND lease_owner = ${owner} AND status <> 'done' FOR UPDATE`
    })
    const lockJobForCompletion = (jobId: string, owner: string) =>
      findForCompletion({ jobId, owner }).pipe(Effect.orDie)

    const completeJob = (jobId: string, now: Date) =>
      sql`
        UPDATE purchase_jobs SET status = 'done', completed_at = ${now}, lease_owner = NULL, lease_until = NULL
        WHERE id = ${jobId}`.pipe(Effect.asVoid, Effect.orDie)

    const findJob = SqlSchema.findOne({
      Request: Schema.Struct({ orgId: Schema.String, jobId: Schema.String }),
      Result: JobRow,
      execute: ({ jobId, orgId }) => sql`SELECT * FROM purchase_jobs WHERE id = ${jobId} AND org_id = ${orgId}`
    })
    const job = (orgId: string, jobId: string) => findJob({ orgId, jobId }).pipe(Effect.orDie)

    return {
      insertJob,
      claimJob,
      renewJobLease,
      releaseJobLease,
      releaseLeasesOf,
      lockJobForCompletion,
      completeJob,
      job
    } as const
  })
}) {}
