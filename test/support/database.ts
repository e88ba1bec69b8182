import { randomBytes } from "node:crypto"
import pg from "pg"
import { eventually } from "./eventually.js"

/**
 * Every suite gets its own database on the real PostgreSQL server named by
 * TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), dropped afterwards.
 * It is a copy of the run's template (test/support/globalSetup.ts): migrated, and seeded as
 * the service seeds at start.
 */
export const serverUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"

export const withDatabase = (url: string, database: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

export const uniqueName = (label: string) =>
  `t_${label.replace(/[^a-z0-9]/gi, "_").toLowerCase()}_${randomBytes(4).toString("hex")}`

const onServer = async <A>(use: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: serverUrl })
  await client.connect()
  try {
    return await use(client)
  } finally {
    await client.end()
  }
}

/** Creates `name`, empty or as a copy of `template` (which nobody may be connected to). */
export const createDatabase = (name: string, template?: string) =>
  onServer((client) => client.query(`CREATE DATABASE ${name}${template === undefined ? "" : ` TEMPLATE ${template}`}`))

export const dropDatabase = (name: string) =>
  onServer(async (client) => {
    // Pools closed just before may still be hanging up: terminating a connection that is
    // closing raises an error in its process with nobody to catch it. Wait for them (a few
    // seconds at most), then force whatever is left.
    await eventually(async () => {
      const { rows } = await client.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1`, [
        name
      ])
      return rows[0].n === 0
    }, { timeoutMs: 5_000, what: "the closed pools to hang up" }).catch(() => undefined)
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  })

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

export interface TestDatabaseOptions {
  /** A database with no tables at all (for suites that run migrations from the first one). */
  readonly empty?: boolean
}

export const createTestDatabase = async (label: string, options: TestDatabaseOptions = {}): Promise<TestDatabase> => {
  const name = uniqueName(label)
  // Imported here, in a suite: the global setup (which runs outside any suite) imports this file too.
  const { inject } = await import("vitest")
  await createDatabase(name, options.empty === true ? undefined : inject("templateDatabase"))
  const url = withDatabase(serverUrl, name)
  const pool = new pg.Pool({ connectionString: url, max: 4 })
  return {
    name,
    url,
    query: async (text, values) => (await pool.query(text, values as Array<unknown>)).rows,
    drop: async () => {
      await pool.end()
      await dropDatabase(name)
    }
  }
}
