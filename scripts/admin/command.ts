import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * One subcommand of `npm run admin -- <name> ...`. It runs against the service's database
 * (DATABASE_URL, or the embedded one under DATA_DIR while the service is stopped), after
 * the migrations, and prints what it did.
 */
export interface AdminCommand {
  readonly summary: string
  readonly usage: string
  readonly run: (args: ParsedArgs) => Effect.Effect<void, CommandError | unknown, SqlClient.SqlClient>
}

/** `--name value` and `--flag` options, plus the positional words. */
export interface ParsedArgs {
  readonly options: ReadonlyMap<string, string | true>
  readonly positional: ReadonlyArray<string>
}

/** A failure to report to the operator (no stack trace), exit code 1. */
export class CommandError extends Error {
  readonly _tag = "CommandError"
}

export const parseArgs = (argv: ReadonlyArray<string>): ParsedArgs => {
  const options = new Map<string, string | true>()
  const positional: Array<string> = []
  for (let index = 0; index < argv.length; index++) {
    const word = argv[index]!
    if (!word.startsWith("--")) {
      positional.push(word)
      continue
    }
    const [name, inline] = word.slice(2).split(/=(.*)/s, 2) as [string, string | undefined]
    if (inline !== undefined) options.set(name, inline)
    else if (index + 1 < argv.length && !argv[index + 1]!.startsWith("--")) options.set(name, argv[++index]!)
    else options.set(name, true)
  }
  return { options, positional }
}

export const requiredOption = (args: ParsedArgs, name: string): Effect.Effect<string, CommandError> => {
  const value = args.options.get(name)
  return typeof value === "string" && value.length > 0
    ? Effect.succeed(value)
    : Effect.fail(new CommandError(`--${name} is required`))
}
