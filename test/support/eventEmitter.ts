import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import type { EventInput } from "../../src/Domain/Events.js"
import { AppConfig } from "../../src/Services/AppConfig.js"
import { Events } from "../../src/Services/Events/Events.js"
import { MailOutbox } from "../../src/Services/Mailer/MailOutbox.js"
import { MailOutboxLive } from "../../src/Services/Mailer/MailOutboxLive.js"
import { configOf } from "./config.js"
import type { TestDatabase } from "./database.js"

/**
 * The event store's own service, run against a suite's database from the test process: the
 * way other areas emit (inside a transaction of their change), without going through their
 * endpoints.
 */
export const eventEmitter = (
  db: TestDatabase,
  env: Record<string, string> = {},
  extra: Layer.Layer<never> = Layer.empty,
  connections = 2
) => {
  const layer = Layer.mergeAll(Events.Default, MailOutboxLive).pipe(
    Layer.provideMerge(PgClient.layer({ url: Redacted.make(db.url), maxConnections: connections })),
    Layer.provide(AppConfig.Default),
    Layer.provide(Layer.setConfigProvider(configOf(env))),
    Layer.provide(extra)
  )
  const runtime = ManagedRuntime.make(layer)
  return {
    /** Emits inside a transaction, as a change would. */
    emit: (orgId: string, event: EventInput) =>
      runtime.runPromise(
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const events = yield* Events
          return yield* events.emit(orgId, event).pipe(sql.withTransaction)
        })
      ),
    /** Emits and then rolls the transaction back (the change failed): nothing may remain. */
    emitAndRollBack: (orgId: string, event: EventInput) =>
      runtime.runPromise(
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const events = yield* Events
          return yield* Effect.gen(function*() {
            yield* events.emit(orgId, event)
            return yield* Effect.fail("change failed" as const)
          }).pipe(sql.withTransaction, Effect.either)
        })
      ),
    /** Queues a mail through the outbox, as other areas do. */
    enqueueMail: (message: Parameters<MailOutbox["Type"]["enqueue"]>[0]) =>
      runtime.runPromise(Effect.flatMap(MailOutbox, (outbox) => outbox.enqueue(message))),
    close: () => runtime.dispose()
  }
}

export type EventEmitter = ReturnType<typeof eventEmitter>
