import { NodeContext } from "@effect/platform-node"
import { Cause, ConfigProvider, Effect, Layer, Logger, LogLevel, Option } from "effect"
import { DatabaseLive } from "../src/Layers/Database.js"
import { EmbeddedDatabaseInUse } from "../src/Layers/EmbeddedLock.js"
import { MigrationsLive } from "../src/Layers/Migrations.js"
import { CommandError, parseArgs } from "./admin/command.js"
import { commands } from "./admin/commands.js"

/**
 * Operator commands: `npm run admin -- <command> [options]`, against DATABASE_URL (or the
 * embedded database under DATA_DIR, which it refuses while the service holds it). `npm run admin -- help`
 * lists the commands.
 */
const [name, ...rest] = process.argv.slice(2)

const help = () => {
  console.log("Usage: npm run admin -- <command> [options]\n\nCommands:")
  for (const [commandName, command] of Object.entries(commands)) {
    console.log(`  ${commandName.padEnd(13)} ${command.summary}\n  ${"".padEnd(13)} ${command.usage}`)
  }
}

const command = name === undefined ? undefined : commands[name]
if (command === undefined) {
  if (name !== undefined && name !== "help" && name !== "--help") console.error(`Unknown command: ${name}\n`)
  help()
  process.exit(name === undefined || name === "help" || name === "--help" ? 0 : 1)
}

const Database = Layer.provideMerge(MigrationsLive, DatabaseLive).pipe(Layer.provide(NodeContext.layer))

const program = Effect.suspend(() => command!.run(parseArgs(rest))).pipe(
  Effect.provide(Layer.merge(Database, Logger.minimumLogLevel(LogLevel.Warning))),
  Effect.withConfigProvider(ConfigProvider.fromEnv())
)

Effect.runPromiseExit(program).then((exit) => {
  if (exit._tag === "Success") process.exit(0)
  const failure = Option.getOrUndefined(Cause.failureOption(exit.cause))
  if (failure instanceof CommandError || failure instanceof EmbeddedDatabaseInUse) {
    console.error(`Error: ${failure.message}`)
  } else console.error(`Failed: ${Cause.pretty(exit.cause, { renderErrorCause: true })}`)
  process.exit(1)
})
