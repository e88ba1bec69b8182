import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Work waiting in the durable tables, read when `/metrics` is scraped: open ledger holds,
 * webhook deliveries and mails not yet sent, purchase jobs queued and running. One
 * statement, counted from the partial indexes the workers use.
 */
export interface BacklogCounts {
  readonly holds_open: number
  readonly webhook_deliveries_pending: number
  readonly mails_pending: number
  readonly jobs_queued: number
  readonly jobs_running: number
}

export class Backlogs extends Effect.Service<Backlogs>()("Observability/Backlogs", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const counts = sql<BacklogCounts>`
      SELECT
        (SELECT count(*)::int FROM ledger_holds WHERE status = 'held') AS holds_open,
        (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'pending') AS webhook_deliveries_pending,
        (SELECT count(*)::int FROM mail_outbox WHERE status = 'pending') AS mails_pending,
        (SELECT count(*)::int FROM purchase_jobs WHERE status = 'queued') AS jobs_queued,
        (SELECT count(*)::int FROM purchase_jobs WHERE status = 'running') AS jobs_running`.pipe(
      Effect.map((rows) => rows[0]!)
    )
    return { counts } as const
  })
}) {}
