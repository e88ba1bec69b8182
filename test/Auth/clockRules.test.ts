import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, Layer, Redacted, TestClock, TestContext } from "effect"
import * as OTPAuth from "otpauth"
import { afterAll, beforeAll } from "vitest"
import { runMigrations } from "../../src/Layers/Migrations.js"
import { Admins } from "../../src/Services/Auth/Admins.js"
import { Credentials } from "../../src/Services/Auth/Credentials.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { eventuallyEffect } from "../support/eventually.js"
import { seedAgent, seedOrg } from "../support/fixtures.js"

/**
 * Time rules of the identity services, run against real PostgreSQL with the test clock:
 * usage stamps at most once a minute, the administrator lock of 15 minutes.
 */
let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase("id_clock")
  await Effect.runPromise(
    runMigrations.pipe(
      Effect.provide(
        PgClient.layer({ url: Redacted.make(db.url), maxConnections: 1 }).pipe(Layer.provide(NodeContext.layer))
      ),
      Effect.scoped
    )
  )
})
afterAll(async () => {
  await db?.drop()
})

const services = () =>
  Layer.mergeAll(Credentials.Default, Admins.Default).pipe(
    Layer.provideMerge(PgClient.layer({ url: Redacted.make(db.url), maxConnections: 2 }))
  )

/** Waits (real time, whatever the test's clock) for a background write to land. */
const landed = <A>(read: Effect.Effect<A>, done: (a: A) => boolean) =>
  eventuallyEffect(Effect.map(read, (value) => done(value) && value), { what: "a background write" })

describe("usage stamps", () => {
  it.scoped("key_last_used_at and the address record move at most once a minute", () =>
    Effect.gen(function*() {
      const { orgId } = yield* Effect.promise(() => seedOrg(db))
      const { agentId, key } = yield* Effect.promise(() => seedAgent(db, orgId))
      const sql = yield* SqlClient.SqlClient
      const credentials = yield* Credentials
      const lastUsed = sql<{ at: Date | null; seen: Date | null }>`
        SELECT a.key_last_used_at AS at, k.last_seen_at AS seen
        FROM agents a LEFT JOIN agent_key_addresses k ON k.agent_id = a.id AND k.address = '203.0.113.1'
        WHERE a.id = ${agentId}`.pipe(Effect.map((rows) => rows[0]!), Effect.orDie)

      const t0 = Math.floor(Date.now() / 1000) * 1000
      yield* TestClock.setTime(t0)
      yield* credentials.authenticateAgentKey(key, "203.0.113.1")
      yield* landed(lastUsed, (row) => row.at !== null && row.seen !== null)
      expect((yield* lastUsed).at!.getTime()).toBe(t0)

      yield* TestClock.adjust(Duration.seconds(30))
      yield* credentials.authenticateAgentKey(key, "203.0.113.1")
      // A use from another address is recorded (a background write after the one above, had
      // there been one): once it has landed, the key's stamp must not have moved.
      yield* credentials.authenticateAgentKey(key, "203.0.113.2")
      const other = sql<{ n: number }>`
        SELECT count(*)::int AS n FROM agent_key_addresses WHERE agent_id = ${agentId} AND address = '203.0.113.2'`
        .pipe(Effect.map((rows) => rows[0]!), Effect.orDie)
      yield* landed(other, (row) => row.n === 1)
      expect((yield* lastUsed).at!.getTime()).toBe(t0)

      yield* TestClock.adjust(Duration.seconds(31))
      yield* credentials.authenticateAgentKey(key, "203.0.113.1")
      // The key's stamp and the address's are two writes: wait for both before reading them.
      const moved = yield* landed(lastUsed, (row) => row.at!.getTime() !== t0 && row.seen!.getTime() !== t0)
      expect(moved.at!.getTime()).toBe(t0 + 61_000)
      expect(moved.seen!.getTime()).toBe(t0 + 61_000)
    }).pipe(Effect.provide(Layer.merge(services(), TestContext.TestContext))))
})

describe("administrator lock", () => {
  it.scoped("five failures lock for 15 minutes; the lock then opens", () =>
    Effect.gen(function*() {
      const t0 = Math.floor(Date.now() / 30_000) * 30_000
      yield* TestClock.setTime(t0)
      const admins = yield* Admins
      const password = "correct horse battery staple"
      const created = yield* admins.create("clock-admin@example.com", password)
      const codeAt = (ms: number) =>
        OTPAuth.TOTP.generate({ secret: OTPAuth.Secret.fromBase32(created.totpSecret), timestamp: ms })
      const origin = { ip: "203.0.113.1", userAgent: "test" }
      const attempt = (pw: string, code: string) =>
        admins.signIn("clock-admin@example.com", pw, code, origin).pipe(
          Effect.map(() => "signed_in"),
          Effect.catchAll((error) => Effect.succeed(error._tag === "AdminLockedOut" ? error.error._tag : error._tag)),
          Effect.either,
          Effect.map(Either.merge)
        )

      for (let i = 0; i < 5; i++) expect(yield* attempt(`${password}!`, codeAt(t0))).toBe("invalid_credentials")
      expect(yield* attempt(password, codeAt(t0))).toBe("locked")
      yield* TestClock.adjust(Duration.minutes(14))
      expect(yield* attempt(password, codeAt(t0 + 14 * 60_000))).toBe("locked")
      yield* TestClock.adjust(Duration.minutes(1))
      expect(yield* attempt(password, codeAt(t0 + 15 * 60_000))).toBe("signed_in")
      // The same code never works twice.
      expect(yield* attempt(password, codeAt(t0 + 15 * 60_000))).toBe("invalid_credentials")
    }).pipe(Effect.provide(Layer.merge(services(), TestContext.TestContext))))
})
