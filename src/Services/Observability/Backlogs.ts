import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"

/**
 * Work waiting in the durable tables, read when `/metrics` is scraped: open ledger holds,
 * webhook deliveries and mails not yet sent, purchase jobs queued and running. One
 * statement, counted from the partial indexes the workers use.
 */
export const BacklogCounts = Schema.Struct({
  holds_open: Schema.Number,
  webhook_deliveries_pending: Schema.Number,
  mails_pending: Schema.Number,
  jobs_queued: Schema.Number,
  jobs_running: Schema.Number
})
export type BacklogCounts = typeof BacklogCounts.Type

export class Backlogs extends Effect.Service<Backlogs>()("Observability/Backlogs", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const counts = SqlSchema.single({
      Request: Schema.Void,
      Result: BacklogCounts,
      execute: () =>
        sql`
      SELECT
        (SELECT count(*)::int FROM ledger_holds WHERE status = 'held') AS holds_open,
        (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'pending') AS webhook_deliveries_pending,
        (SELECT count(*)::int FROM mail_outbox WHERE status = 'pending') AS mails_pending,
        (SELECT count(*)::int FROM purchase_jobs WHERE status = 'queued') AS jobs_queued,
        (SELECT count(*)::int FROM purchase_jobs WHERE status = 'running') AS jobs_running`
    })(undefined)
    return { counts } as const
  })
}) {}
