import { execFile, execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import type { TestDatabase } from "./database.js"
import { freePort, listening } from "./privateRedis.js"
import { eventually } from "./world.js"

/**
 * A PostgreSQL 15 cluster of the test's own (never the shared server), in a temporary
 * directory on a free loopback port, that the test may stop and start again. initdb refuses
 * to run as root, so when the suite runs as root the cluster belongs to the `postgres` user.
 * `close` stops it at once and removes its files; a process that exits without calling it
 * still stops the cluster on its way out.
 */
export interface PrivatePostgres {
  readonly port: number
  /** One database in it, with the shape of a suite's test database (fixtures take it). */
  readonly db: TestDatabase
  /** Stops the server (fast shutdown: sessions are ended, new connections refused). */
  readonly stop: () => Promise<void>
  /** Starts it again on the same port and files, once it accepts connections. */
  readonly start: () => Promise<void>
  readonly close: () => Promise<void>
}

const BIN = "/usr/lib/postgresql/15/bin"
const asRoot = process.getuid?.() === 0
/** A command of PostgreSQL's, run as the cluster's owner. */
const command = (name: string, args: ReadonlyArray<string>): [string, Array<string>] =>
  asRoot ? ["runuser", ["-u", "postgres", "--", path.join(BIN, name), ...args]] : [path.join(BIN, name), [...args]]

const run = (name: string, args: ReadonlyArray<string>) =>
  new Promise<void>((resolve, reject) => {
    const [file, fileArgs] = command(name, args)
    execFile(file, fileArgs, { timeout: 60_000 }, (error, _stdout, stderr) =>
      error ? reject(new Error(`${name} failed: ${error.message}\n${stderr}`)) : resolve())
  })

export const startPrivatePostgres = async (): Promise<PrivatePostgres> => {
  const port = await freePort()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "private-pg-"))
  if (asRoot) execFileSync("chown", ["postgres:postgres", dir])
  const data = path.join(dir, "data")
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`
  const pgCtl = (...args: Array<string>) => run("pg_ctl", ["-D", data, "-l", path.join(dir, "log"), ...args])
  const stopNow = () => {
    try {
      const [file, args] = command("pg_ctl", ["-D", data, "stop", "-m", "immediate"])
      execFileSync(file, args, { stdio: "ignore" })
    } catch {
      // Not running.
    }
  }
  process.once("exit", stopNow)
  let pool: pg.Pool | undefined
  try {
    await run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync"])
    const start = async () => {
      await pgCtl("-o", options, "-w", "start")
      await eventually(() => listening(port), { timeoutMs: 60_000, what: "the private PostgreSQL" })
    }
    await start()
    const url = `postgres://postgres@127.0.0.1:${port}/chaos`
    const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` })
    await admin.connect()
    await admin.query("CREATE DATABASE chaos")
    await admin.end()
    pool = new pg.Pool({ connectionString: url, max: 4 })
    // Its connections end with every stop: the next query opens new ones.
    pool.on("error", () => undefined)
    const queries = pool
    const close = async () => {
      await queries.end().catch(() => undefined)
      stopNow()
      process.off("exit", stopNow)
      fs.rmSync(dir, { recursive: true, force: true })
    }
    return {
      port,
      db: {
        name: "chaos",
        url,
        query: async (text, values) => (await queries.query(text, values as Array<unknown>)).rows,
        drop: close
      },
      stop: () => pgCtl("-m", "fast", "-w", "stop"),
      start,
      close
    }
  } catch (error) {
    await pool?.end().catch(() => undefined)
    stopNow()
    process.off("exit", stopNow)
    fs.rmSync(dir, { recursive: true, force: true })
    throw error
  }
}
