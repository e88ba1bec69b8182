import { Migrator } from "@effect/sql"
import { Effect, Layer } from "effect"
import { migrations } from "./migrations/index.js"

/** Runs the SQL migrations at start, before anything reads the database. */
export const runMigrations = Migrator.make({})({ loader: Migrator.fromRecord(migrations) })

export const MigrationsLive = Layer.effectDiscard(
  runMigrations.pipe(
    Effect.tap((applied) =>
      applied.length > 0
        ? Effect.logInfo(`Applied migrations: ${applied.map(([id, name]) => `${id}_${name}`).join(", ")}`)
        : Effect.void
    ),
    Effect.orDie
  )
)
