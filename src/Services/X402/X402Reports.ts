import { SqlClient } from "@effect/sql"
import { Effect, Stream } from "effect"
import { type ExportFormat, exportLines } from "../Usage/Exports.js"
import { type UsageQuery, usageRange } from "../Usage/Usage.js"
import { type PaymentStatus, X402Repo } from "./X402Repo.js"

/**
 * What administrators see of x402 (`/admin/x402/...`, `npm run admin -- x402 ...`): revenue
 * settled per UTC day and kind, the payments of a range by status, and every payment of a
 * range as CSV or JSON Lines, streamed from a cursor as the other exports are. Amounts are in
 * the asset's units (as settled on chain), beside the price in credits.
 */
export const PAYMENT_EXPORT_COLUMNS = [
  "id",
  "created_at",
  "kind",
  "payer",
  "payment_identifier",
  "subject",
  "status",
  "scheme",
  "network",
  "asset",
  "pay_to",
  "price_credits",
  "authorized_units",
  "due_units",
  "settled_units",
  "transaction",
  "failure",
  "finished_at"
] as const

export class X402Reports extends Effect.Service<X402Reports>()("X402/X402Reports", {
  dependencies: [X402Repo.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* X402Repo

    /** Settled revenue per day and kind, and the range's payments by status. */
    const revenue = (query: UsageQuery) =>
      Effect.gen(function*() {
        const range = yield* usageRange("", query)
        const days = yield* repo.revenue(range)
        const statuses = yield* sql<{ status: PaymentStatus; payments: number; units: string }>`
          SELECT status, count(*)::int AS payments, COALESCE(SUM(settled_units), 0)::text AS units
          FROM x402_payments WHERE created_at >= ${range.from} AND created_at < ${range.until}
          GROUP BY status ORDER BY status`.pipe(Effect.orDie)
        const total = days.reduce((sum, day) => sum + day.settled_units, 0n)
        return {
          from: range.from.toISOString().slice(0, 10),
          to: new Date(range.until.getTime() - 1).toISOString().slice(0, 10),
          settled_units: total.toString(),
          by_day: days.map((day) => ({ ...day, settled_units: day.settled_units.toString() })),
          by_status: statuses.map((row) => ({ status: row.status, payments: row.payments, settled_units: row.units }))
        }
      })

    /** Every payment of the range, oldest first, as lines of CSV (with its header) or JSON Lines. */
    const exportPayments = (query: UsageQuery, format: ExportFormat) =>
      Effect.map(usageRange("", query), (range) => ({
        range,
        lines: exportLines(
          PAYMENT_EXPORT_COLUMNS,
          format,
          sql<Record<string, unknown>>`
            SELECT id, created_at, kind, payer, payment_identifier, subject, status, scheme, network, asset, pay_to,
              price_credits::text AS price_credits, authorized_units::text AS authorized_units,
              due_units::text AS due_units, settled_units::text AS settled_units, transaction, failure, finished_at
            FROM x402_payments
            WHERE created_at >= ${range.from} AND created_at < ${range.until}
            ORDER BY created_at, id`.stream.pipe(Stream.orDie)
        )
      }))

    return { revenue, exportPayments } as const
  })
}) {}
