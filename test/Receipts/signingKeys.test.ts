import { NodeContext } from "@effect/platform-node"
import type { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runMigrations } from "../../src/Layers/Migrations.js"
import { AppConfig } from "../../src/Services/AppConfig.js"
import { BotKeys } from "../../src/Services/BotAuth/BotKeys.js"
import { SigningKeys } from "../../src/Services/Receipts/SigningKeys.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { makeShiftableClock } from "../support/shiftableClock.js"

/**
 * Several processes sign at once on one database: each keeps its own key in memory, yet one
 * key is made per generation, and all of them move to the next one together when it is due.
 * The request signing keys (Web Bot Auth), which sign only within their window, are found
 * by every replica even when the one that made the key runs a little ahead of the others.
 */
let db: TestDatabase
const clock = makeShiftableClock()
const processes: Array<ManagedRuntime.ManagedRuntime<SigningKeys, never>> = []
// Two replicas signing requests, the first one's clock 2 s ahead of the second's.
const ahead = makeShiftableClock()
const behind = makeShiftableClock()
const replicas: Array<ManagedRuntime.ManagedRuntime<BotKeys, never>> = []

const database = () =>
  PgClient.layer({ url: Redacted.make(db.url), maxConnections: 2 }).pipe(Layer.provide(NodeContext.layer))

/** A process of its own running `service`: its own pool on the suite's database, and `processClock`. */
const processOf = <A, E>(
  service: Layer.Layer<A, E, AppConfig | SqlClient.SqlClient>,
  processClock: ReturnType<typeof makeShiftableClock>
) =>
  ManagedRuntime.make(
    service.pipe(
      Layer.provide(AppConfig.Default),
      Layer.provide(database()),
      Layer.provide(processClock.layer),
      Layer.orDie
    )
  )

beforeAll(async () => {
  db = await createTestDatabase("signing_keys")
  await Effect.runPromise(runMigrations.pipe(Effect.provide(database()), Effect.scoped))
  for (let i = 0; i < 4; i++) processes.push(processOf(SigningKeys.Default, clock))
  ahead.advance("2 seconds")
  for (const replicaClock of [ahead, behind]) replicas.push(processOf(BotKeys.Default, replicaClock))
})
afterAll(async () => {
  await Promise.all([...processes, ...replicas].map((runtime) => runtime.dispose()))
  await db?.drop()
})

const activeKids = () =>
  Promise.all(
    processes.map((runtime) => runtime.runPromise(Effect.map(SigningKeys, (keys) => keys.active).pipe(Effect.flatten)))
  ).then(
    (keys) => keys.map((key) => key.kid)
  )

describe("signing keys across processes", () => {
  it("make one key per generation, however many sign at once, and rotate together", async () => {
    const first = await activeKids()
    expect(new Set(first).size).toBe(1)
    expect(await db.query(`SELECT generation FROM signing_keys ORDER BY generation`)).toEqual([{ generation: 1 }])

    clock.advance("89 days")
    expect(await activeKids()).toEqual(first)

    clock.advance("2 days")
    const second = await activeKids()
    expect(new Set(second).size).toBe(1)
    expect(second[0]).not.toBe(first[0])
    expect(await db.query(`SELECT generation FROM signing_keys ORDER BY generation`)).toEqual([
      { generation: 1 },
      { generation: 2 }
    ])
    const published = await processes[0]!.runPromise(Effect.flatMap(SigningKeys, (keys) => keys.published))
    expect(published.map((key) => key.kid)).toEqual([second[0], first[0]])
  })
})

describe("request signing keys across replicas", () => {
  const activeKid = (replica: ManagedRuntime.ManagedRuntime<BotKeys, never>) =>
    replica.runPromise(Effect.flatMap(BotKeys, (keys) => keys.active)).then((key) => key.kid)

  it("are found by a replica whose clock is behind the one that made them, first and after a stop", async () => {
    // The replica ahead makes the first key; the one behind reads it at its own, earlier now.
    const first = await activeKid(replicas[0]!)
    expect(await activeKid(replicas[1]!)).toBe(first)

    // Both stopped past the key's end: the one ahead makes the next key when it starts again.
    for (const clock of [ahead, behind]) clock.advance("40 days")
    const next = await activeKid(replicas[0]!)
    expect(next).not.toBe(first)
    expect(await activeKid(replicas[1]!)).toBe(next)
    expect(await db.query(`SELECT generation FROM bot_signing_keys ORDER BY generation`)).toEqual([
      { generation: 1 },
      { generation: 2 }
    ])
  })
})
