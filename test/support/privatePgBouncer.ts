import { type ChildProcess, spawn } from "node:child_process"
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort, listening } from "./privateRedis.js"
import { eventually } from "./world.js"

/**
 * A PgBouncer of the test's own (Debian's `pgbouncer`, installed by the test set-up) on a
 * free loopback port, pooling by transaction in front of one database of the local
 * PostgreSQL: `url` is that database through it. Run as the `postgres` user when the tests
 * run as root (PgBouncer refuses root). `close` stops it and removes its files.
 */
export interface PrivatePgBouncer {
  readonly url: string
  readonly close: () => Promise<void>
}

export const startPrivatePgBouncer = async (databaseUrl: string): Promise<PrivatePgBouncer> => {
  const target = new URL(databaseUrl)
  const database = target.pathname.slice(1)
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), "pgbouncer-"))
  chmodSync(dir, 0o777)
  const config = join(dir, "pgbouncer.ini")
  writeFileSync(
    config,
    [
      "[databases]",
      `${database} = host=${target.hostname} port=${target.port || 5432} dbname=${database} user=${
        target.username || "postgres"
      }`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      `unix_socket_dir = ${dir}`,
      `pidfile = ${join(dir, "pgbouncer.pid")}`,
      "auth_type = any",
      "pool_mode = transaction",
      "default_pool_size = 10",
      "max_client_conn = 200",
      "ignore_startup_parameters = extra_float_digits,options"
    ].join("\n")
  )
  chmodSync(config, 0o644)
  const asRoot = process.getuid?.() === 0
  const child: ChildProcess = spawn("/usr/sbin/pgbouncer", [...(asRoot ? ["-u", "postgres"] : []), config], {
    stdio: "ignore"
  })
  await eventually(() => listening(port), { timeoutMs: 30_000, what: `the private PgBouncer on port ${port}` })
  const url = new URL(databaseUrl)
  url.port = String(port)
  return {
    url: url.toString(),
    close: () =>
      new Promise<void>((resolve) => {
        const done = () => {
          rmSync(dir, { recursive: true, force: true })
          resolve()
        }
        if (child.exitCode !== null || child.signalCode !== null) return done()
        child.once("exit", done)
        child.kill("SIGTERM")
      })
  }
}
