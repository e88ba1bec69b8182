import { Effect, Metric } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CountingClient, PreparingClient } from "../../src/Layers/PreparedStatements.js"
import { statementsSent } from "../../src/Services/Observability/DatabaseMetrics.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"

/**
 * The pg client under the SQL client prepares each parameterised statement once per
 * connection, and counts every statement it sends.
 */
let db: TestDatabase
let pool: pg.Pool

beforeAll(async () => {
  db = await createTestDatabase("prepared")
  pool = new pg.Pool({ connectionString: db.url, max: 1, Client: PreparingClient })
})
afterAll(async () => {
  await pool?.end()
  await db?.drop()
})

// The SQL client's way of calling: text, values, callback.
const run = (client: pg.PoolClient, text: string, values: Array<unknown>) =>
  new Promise<Array<Record<string, unknown>>>((resolve, reject) =>
    (client.query as Function)(
      text,
      values,
      (error: Error | null, result: pg.QueryResult) => error ? reject(error) : resolve(result.rows)
    )
  )

const preparedOn = async (client: pg.PoolClient) =>
  (await client.query("SELECT name, statement FROM pg_prepared_statements ORDER BY name")).rows as Array<{
    name: string
    statement: string
  }>

describe("prepared statements", () => {
  it("names a parameterised statement by its text once, and reuses it with other values", async () => {
    const client = await pool.connect()
    try {
      expect(await run(client, "SELECT $1::int + 1 AS n", [1])).toEqual([{ n: 2 }])
      expect(await run(client, "SELECT $1::int + 1 AS n", [41])).toEqual([{ n: 42 }])
      const prepared = await preparedOn(client)
      expect(prepared).toHaveLength(1)
      expect(prepared[0]!.name).toMatch(/^s_[0-9a-f]{20}$/)
      expect(prepared[0]!.statement).toBe("SELECT $1::int + 1 AS n")
      // Statements without parameters are not prepared.
      await run(client, "SELECT 1", [])
      expect(await preparedOn(client)).toHaveLength(1)
    } finally {
      client.release()
    }
  })

  it("counts every statement it sends, prepared or not, with or without parameters", async () => {
    const sent = () => Effect.runSync(Metric.value(statementsSent)).count
    const client = await pool.connect()
    const unnamed = new pg.Pool({ connectionString: db.url, max: 1, Client: CountingClient })
    try {
      const before = sent()
      await run(client, "SELECT $1::int AS n", [1])
      await run(client, "SELECT $1::int AS n", [2])
      await run(client, "SELECT 1", [])
      expect(sent() - before).toBe(3)
      await unnamed.query("SELECT $1::int AS n", [3])
      expect(sent() - before).toBe(4)
    } finally {
      client.release()
      await unnamed.end()
    }
  })

  it("prepares at most 512 texts a connection; later ones still run, unnamed", async () => {
    const client = await pool.connect()
    try {
      for (let i = 0; i < 520; i++) expect(await run(client, `SELECT $1::int + ${i} AS n`, [1])).toEqual([{ n: 1 + i }])
      expect((await preparedOn(client)).length).toBeLessThanOrEqual(512)
    } finally {
      client.release()
    }
  })
})
