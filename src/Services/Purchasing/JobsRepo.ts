import { Model, SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { JobId, OrgId } from "../../Domain/Ids.js"
import { PurchaseJob } from "../../Domain/PurchaseJob.js"

/**
 * Purchase jobs: large orders run in the background under a renewable lease; rows decode to
 * the `PurchaseJob` model, and a new one is written from `PurchaseJob.insert`.
 */
export class JobsRepo extends Effect.Service<JobsRepo>()("Purchasing/JobsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const rows = yield* Model.makeRepository(PurchaseJob, {
      tableName: "purchase_jobs",
      spanPrefix: "JobsRepo",
      idColumn: "id"
    })
    /** A queued job: no lease, not started (those columns are left NULL). */
    const insertJob = (row: typeof PurchaseJob.insert.Type) => rows.insertVoid(row).pipe(Effect.orDie)

    const claimOldest = SqlSchema.findOne({
      Request: Schema.Struct({ owner: Schema.String, now: Schema.DateFromSelf, until: Schema.DateFromSelf }),
      Result: PurchaseJob,
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

    const renewJobLease = (jobId: JobId, owner: string, until: Date) =>
      sql`
        UPDATE purchase_jobs SET lease_until = ${until}
        WHERE id = ${jobId} AND lease_owner = ${owner} AND status <> 'done' RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )

    const releaseJobLease = (jobId: JobId, owner: string) =>
      sql`UPDATE purchase_jobs SET lease_owner = NULL, lease_until = NULL WHERE id = ${jobId} AND lease_owner = ${owner}`
        .pipe(Effect.asVoid, Effect.orDie)

    /** Gives back every job lease `owner` holds (a worker whose run failed half-way). */
    const releaseLeasesOf = (owner: string) =>
      sql`UPDATE purchase_jobs SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = ${owner} AND status <> 'done'`
        .pipe(Effect.asVoid, Effect.orDie)

    const findForCompletion = SqlSchema.findOne({
      Request: Schema.Struct({ jobId: JobId, owner: Schema.String }),
      Result: PurchaseJob,
      execute: ({ jobId, owner }) =>
        sql`SELECT * FROM purchase_jobs WHERE id = ${jobId} AND lease_owner = ${owner} AND status <> 'done' FOR UPDATE`
    })
    const lockJobForCompletion = (jobId: JobId, owner: string) => findForCompletion({ jobId, owner }).pipe(Effect.orDie)

    const completeJob = (jobId: JobId, now: Date) =>
      sql`
        UPDATE purchase_jobs SET status = 'done', completed_at = ${now}, lease_owner = NULL, lease_until = NULL
        WHERE id = ${jobId}`.pipe(Effect.asVoid, Effect.orDie)

    const findJob = SqlSchema.findOne({
      Request: Schema.Struct({ orgId: OrgId, jobId: JobId }),
      Result: PurchaseJob,
      execute: ({ jobId, orgId }) => sql`SELECT * FROM purchase_jobs WHERE id = ${jobId} AND org_id = ${orgId}`
    })
    const job = (orgId: OrgId, jobId: JobId) => findJob({ orgId, jobId }).pipe(Effect.orDie)

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
