import { randomBytes } from "node:crypto"
import pg from "pg"

/**
 * Every suite gets its own database on the real PostgreSQL server named by
 * TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), dropped afterwards.
 */
export const serverUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"

const withDatabase = (url: string, database: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

export interface TestDatabase {
  readonly name: string
  readonly url: string
  /** Runs one statement on the suite's database. */
  readonly query: <R extends pg.QueryResultRow = any>(
    text: string,
    values?: ReadonlyArray<unknown>
  ) => Promise<Array<R>>
  readonly drop: () => Promise<void>
}

export const createTestDatabase = async (label: string): Promise<TestDatabase> => {
  const name = `t_${label.replace(/[^a-z0-9]/gi, "_").toLowerCase()}_${randomBytes(4).toString("hex")}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = withDatabase(serverUrl, name)
  const pool = new pg.Pool({ connectionString: url, max: 4 })
  return {
    name,
    url,
    query: async (text, values) => (await pool.query(text, values as Array<unknown>)).rows,
    drop: async () => {
      await pool.end()
      const client = new pg.Client({ connectionString: serverUrl })
      await client.connect()
      // Pools closed just before may still be hanging up: terminating a connection that is
      // closing raises an error in its process with nobody to catch it. Wait for them (a few
      // seconds at most), then force whatever is left.
      const deadline = Date.now() + 5_000
      while (Date.now() < deadline) {
        const { rows } = await client.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1`, [
          name
        ])
        if (rows[0].n === 0) break
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await client.end()
    }
  }
}
