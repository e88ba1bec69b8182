import { Migrator } from "@effect/sql"
import { Effect, Layer } from "effect"
import { SchemaVersion } from "../Services/Lifecycle/Readiness.js"
import { LATEST_MIGRATION, migrations } from "./migrations/index.js"

/** Runs the SQL migrations at start, before anything reads the database. */
export const runMigrations = Migrator.make({})({ loader: Migrator.fromRecord(migrations) })

/** Runs the migrations and tells readiness which one this version needs. */
export const MigrationsLive = Layer.effect(
  SchemaVersion,
  runMigrations.pipe(
    Effect.tap((applied) =>
      applied.length > 0
        ? Effect.logInfo(`Applied migrations: ${applied.map(([id, name]) => `${id}_${name}`).join(", ")}`)
        : Effect.void
    ),
    Effect.orDie,
    Effect.as(LATEST_MIGRATION)
  )
)
