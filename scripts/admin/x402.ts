import { Effect, Stream } from "effect"
import { isApiError } from "../../src/Errors/Wire.js"
import { X402Reports } from "../../src/Services/X402/X402Reports.js"
import { type AdminCommand, CommandError } from "./command.js"
import { textOption } from "./operations.js"

/**
 * x402 revenue and payments, as `/admin/x402/...` answers them: `x402 revenue` prints the
 * revenue of a range as JSON; `x402 export` writes every payment of a range to standard
 * output as CSV or JSON Lines, streamed from the database.
 */
const run = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.mapError((error) => isApiError(error) ? new CommandError(`${error._tag}: ${error.message}`) : error),
    Effect.provide(X402Reports.Default)
  )

export const x402Commands: Record<string, AdminCommand> = {
  x402: {
    summary: "x402 revenue of a range of UTC days, or every payment of it as CSV or JSON Lines",
    usage: "x402 revenue|export [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--format csv|jsonl]",
    run: (args) =>
      run(Effect.gen(function*() {
        const what = args.positional[0]
        const query = { from: textOption(args, "from"), to: textOption(args, "to") }
        const reports = yield* X402Reports
        if (what === "revenue") {
          const revenue = yield* reports.revenue(query)
          return yield* Effect.sync(() => console.log(JSON.stringify(revenue, null, 2)))
        }
        if (what === "export") {
          const format = textOption(args, "format") ?? "csv"
          if (format !== "csv" && format !== "jsonl") {
            return yield* Effect.fail(new CommandError("--format is csv or jsonl"))
          }
          const { lines } = yield* reports.exportPayments(query, format)
          return yield* Stream.runForEach(lines, (line) => Effect.sync(() => process.stdout.write(line)))
        }
        return yield* Effect.fail(new CommandError("Say `x402 revenue` or `x402 export`"))
      }))
  }
}
