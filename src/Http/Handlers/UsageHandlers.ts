import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Stream } from "effect"
import { CurrentActor } from "../../Domain/Current.js"
import { dayOf } from "../../Services/Ledger/Time.js"
import { Exports } from "../../Services/Usage/Exports.js"
import { Usage } from "../../Services/Usage/Usage.js"
import { Api } from "../Api.js"

const DAY_MS = 24 * 60 * 60 * 1000

export const UsageHandlers = HttpApiBuilder.group(Api, "usage", (handlers) =>
  Effect.gen(function*() {
    const usage = yield* Usage
    const exports = yield* Exports
    return handlers
      .handle("get", ({ urlParams }) => Effect.flatMap(CurrentActor, (actor) => usage.get(actor, urlParams)))
      .handleRaw("export", ({ path, urlParams }) =>
        Effect.gen(function*() {
          const actor = yield* CurrentActor
          const format = urlParams.format ?? "csv"
          const { lines, range } = yield* exports.lines(actor, path.dataset, format, urlParams)
          const last = dayOf(range.until.getTime() - DAY_MS)
          const name = `${path.dataset}-${dayOf(range.from.getTime())}-to-${last}.${format === "csv" ? "csv" : "jsonl"}`
          return HttpServerResponse.stream(Stream.encodeText(lines), {
            contentType: format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8",
            headers: { "content-disposition": `attachment; filename="${name}"`, "cache-control": "no-store" }
          })
        }))
  }))
