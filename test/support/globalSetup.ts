import { Effect, Layer, Logger, LogLevel, ManagedRuntime } from "effect"
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import type { TestProject } from "vitest/node"
import { DatabaseLive } from "../../src/Layers/Database.js"
import { MigrationsLive } from "../../src/Layers/Migrations.js"
import { AppConfig } from "../../src/Services/AppConfig.js"
import { Catalogue } from "../../src/Services/Catalogue/Catalogue.js"
import { loadProviderKeys } from "../../src/Services/OAuth/ProviderKeys.js"
import { SecretBox } from "../../src/Services/SecretBox/SecretBox.js"
import { Tools } from "../../src/Services/Tools/Tools.js"
import { configOf } from "./config.js"
import { createDatabase, dropDatabase, serverUrl, uniqueName, withDatabase } from "./database.js"

declare module "vitest" {
  export interface ProvidedContext {
    /** The database every suite's database is cloned from: migrated, and seeded as the server seeds at start. */
    readonly templateDatabase: string
  }
}

/**
 * Once per run, before any suite: a database with every migration applied, the catalogue
 * and tools loaded from ./data and the authorization server's keys made, as the service
 * leaves a new database when it starts. Suites clone it (`CREATE DATABASE ... TEMPLATE`,
 * test/support/database.ts) instead of migrating a database of their own; a server started on a clone finds nothing
 * left to migrate or load. Dropped when the run ends.
 */
export default async function setup(project: TestProject) {
  // The service's and the admin command's build, which child processes run (test/support/serviceBuild.ts).
  execFileSync(process.execPath, [fileURLToPath(new URL("../../scripts/build-service.mjs", import.meta.url))], {
    stdio: "inherit"
  })
  const name = uniqueName("template")
  await createDatabase(name)
  try {
    const config = configOf({ DATABASE_URL: withDatabase(serverUrl, name) })
    const database = Layer.provideMerge(MigrationsLive, DatabaseLive)
    const runtime = ManagedRuntime.make(
      Layer.mergeAll(Catalogue.Default, Tools.Default, SecretBox.Default).pipe(
        Layer.provide(AppConfig.Default),
        Layer.provideMerge(database),
        Layer.provide(Logger.minimumLogLevel(LogLevel.Warning)),
        Layer.provide(Layer.setConfigProvider(config))
      )
    )
    await runtime.runPromise(
      Effect.gen(function*() {
        yield* (yield* Catalogue).load
        yield* (yield* Tools).load
        // The authorization server's keys, sealed with the development key the suites use
        // (an RSA key costs each service started on a clone a quarter of a CPU second).
        yield* loadProviderKeys
      })
    )
    // Every connection to it closed: PostgreSQL copies a template nobody is connected to.
    await runtime.dispose()
  } catch (error) {
    await dropDatabase(name)
    throw error
  }
  project.provide("templateDatabase", name)
  return () => dropDatabase(name)
}
