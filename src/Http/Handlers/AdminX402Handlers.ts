import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Stream } from "effect"
import { dayOf } from "../../Services/Ledger/Time.js"
import { X402Reports } from "../../Services/X402/X402Reports.js"
import { Api } from "../Api.js"

const DAY_MS = 24 * 60 * 60 * 1000

/** `/admin/x402/...`: revenue and the payments' export. */
export const AdminX402Handlers = HttpApiBuilder.group(Api, "adminX402", (handlers) =>
  Effect.gen(function*() {
    const reports = yield* X402Reports
    return handlers
      .handle("revenue", ({ urlParams }) => reports.revenue(urlParams))
      .handleRaw("export", ({ urlParams }) =>
        Effect.gen(function*() {
          const format = urlParams.format ?? "csv"
          const { lines, range } = yield* reports.exportPayments(urlParams, format)
          const last = dayOf(range.until.getTime() - DAY_MS)
          const name = `x402-payments-${dayOf(range.from.getTime())}-to-${last}.${format === "csv" ? "csv" : "jsonl"}`
          return HttpServerResponse.stream(Stream.encodeText(lines), {
            contentType: format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8",
            headers: { "content-disposition": `attachment; filename="${name}"`, "cache-control": "no-store" }
          })
        }))
  }))
