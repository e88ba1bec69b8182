import { Clock, Console, Duration, Effect, Schema } from "effect"
import { readFileSync } from "node:fs"
import { ToolFieldsPayload } from "../../src/Http/Groups/AdminOperationsGroup.js"
import { BenchmarkRuns } from "../../src/Services/Benchmarks/BenchmarkRuns.js"
import { adminToolRecord } from "../../src/Services/Tools/AdminToolRecord.js"
import { ToolAdmin } from "../../src/Services/Tools/ToolAdmin.js"
import type { ToolFields } from "../../src/Services/Tools/ToolsRepo.js"
import { type AdminCommand, CommandError, type ParsedArgs, requiredOption } from "./command.js"
import { actingAdmin, type OperationServices, runOperation, textOption } from "./operations.js"

/** Tools: list, create and edit from a JSON file, publish, pause, resume, price, benchmark, adapter check. */
const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
const record = <E, R>(tool: Effect.Effect<Parameters<typeof adminToolRecord>[0], E, R>) =>
  Effect.flatMap(Effect.zip(tool, now), ([row, at]) => Effect.succeed(adminToolRecord(row, at)))

/** The tool's fields from `--file <json>` (the body of POST /admin/tools), whole or in part. */
const fieldsFrom = <A, I>(args: ParsedArgs, schema: Schema.Schema<A, I>) =>
  Effect.gen(function*() {
    const file = yield* requiredOption(args, "file")
    const text = yield* Effect.try({
      try: () => readFileSync(file, "utf8"),
      catch: () => new CommandError(`Cannot read ${file}`)
    })
    const json = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: () => new CommandError(`${file} is not JSON`)
    })
    return yield* Schema.decodeUnknown(schema)(json).pipe(
      Effect.mapError((error) => new CommandError(`${file}: ${error.message}`))
    )
  })

const columnsOf = (fields: Partial<typeof ToolFieldsPayload.Type>): Partial<ToolFields> => {
  const { check, ...rest } = fields
  return check === undefined
    ? rest
    : { ...rest, check_id: check.id, check_version: check.version, check_verifies: check.verifies }
}

const toolCommand = (
  summary: string,
  usage: string,
  action: (
    tools: ToolAdmin,
    admin: Effect.Effect.Success<ReturnType<typeof actingAdmin>>,
    tool: string,
    args: ParsedArgs
  ) => Effect.Effect<unknown, unknown, OperationServices>
): AdminCommand => ({
  summary,
  usage,
  run: (args) =>
    runOperation(Effect.gen(function*() {
      const tool = yield* requiredOption(args, "tool")
      const admin = yield* actingAdmin(args)
      return yield* action(yield* ToolAdmin, admin, tool, args)
    }))
})

export const toolCommands: Record<string, AdminCommand> = {
  tools: {
    summary: "List every tool with its gates, adapter check and scheduled price",
    usage: "tools",
    run: () =>
      runOperation(Effect.gen(function*() {
        const rows = yield* (yield* ToolAdmin).list
        const at = yield* now
        return rows.map((row) => adminToolRecord(row, at))
      }))
  },
  "tool-create": {
    summary: "Create a tool (information only until published)",
    usage: "tool-create --admin <email> --file <tool.json>",
    run: (args) =>
      runOperation(Effect.gen(function*() {
        const fields = yield* fieldsFrom(args, ToolFieldsPayload)
        const admin = yield* actingAdmin(args)
        return yield* record((yield* ToolAdmin).create(admin, columnsOf(fields) as ToolFields))
      }))
  },
  "tool-edit": toolCommand(
    "Edit a tool's fields",
    "tool-edit --admin <email> --tool <id or slug> --file <fields.json>",
    (tools, admin, tool, args) =>
      Effect.flatMap(
        fieldsFrom(args, Schema.partial(ToolFieldsPayload)),
        (fields) => record(tools.update(admin, tool, columnsOf(fields)))
      )
  ),
  "tool-publish": toolCommand(
    "Make a tool live through the publishing gates",
    "tool-publish --admin <email> --tool <id or slug>",
    (tools, admin, tool) => record(tools.publish(admin, tool))
  ),
  "tool-pause": toolCommand(
    "Pause a tool (tool.paused to the orgs that used it in 30 days)",
    "tool-pause --admin <email> --tool <id or slug> --reason <text>",
    (tools, admin, tool, args) => tools.pause(admin, tool, textOption(args, "reason"))
  ),
  "tool-resume": toolCommand(
    "Resume a paused tool (the gates are checked again)",
    "tool-resume --admin <email> --tool <id or slug>",
    (tools, admin, tool) => record(tools.resume(admin, tool))
  ),
  "tool-price": toolCommand(
    "Change a tool's price per success from a moment on",
    "tool-price --admin <email> --tool <id or slug> --credits <n> [--valid-from <ISO time>] [--reason <text>]",
    (tools, admin, tool, args) =>
      tools.changePrice(admin, tool, {
        credits: Number(textOption(args, "credits") ?? Number.NaN),
        valid_from: textOption(args, "valid-from"),
        reason: textOption(args, "reason")
      })
  ),
  benchmark: toolCommand(
    "Run a measured benchmark of a tool over a sample set",
    "benchmark --admin <email> --tool <id or slug> [--sample-set <id>] [--wait]",
    (_tools, admin, tool, args) =>
      Effect.gen(function*() {
        const runs = yield* BenchmarkRuns
        const started = yield* runs.start(admin, tool, textOption(args, "sample-set"))
        if (args.options.get("wait") !== true) return started
        // Carries out queued runs here (the service's workers may take some too) until this one ends.
        const owner = `admin-cli:${started.id}`
        for (;;) {
          const run = yield* runs.get(started.id)
          yield* Console.error(`${run.status}: ${run.progress.done}/${run.progress.total} samples`)
          if (run.status === "done" || run.status === "failed") return run
          if (!(yield* runs.runNext(owner))) yield* Effect.sleep(Duration.millis(500))
        }
      })
  ),
  "sample-sets": {
    summary: "The labelled sample sets benchmark runs use",
    usage: "sample-sets",
    run: () => runOperation(Effect.map(BenchmarkRuns, (runs) => runs.sampleSets))
  },
  "tool-check": toolCommand(
    "Run a tool's adapter health check now",
    "tool-check --admin <email> --tool <id or slug>",
    (tools, admin, tool) => Effect.map(tools.recheckAdapter(admin, tool), ({ adapter }) => adapter)
  )
}
