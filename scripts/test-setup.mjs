// Readies this machine for `npm test` (run by `pretest`): the local PostgreSQL and Redis
// started when they are down, Debian's Chromium and PgBouncer installed when missing (the
// dashboard's browser tests drive one, a suite runs the service behind the other). Starts or installs nothing that is already there; where it
// cannot (not root, no such service here), it says what to do and fails.
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync } from "node:fs"
import { createConnection } from "node:net"
import pg from "pg"

const databaseUrl = new URL(process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test")
const redisUrl = new URL(process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379")
const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const isRoot = process.getuid?.() === 0

const fail = (message) => {
  console.error(`Test set-up: ${message}`)
  process.exit(1)
}

const run = (command, args) => spawnSync(command, args, { stdio: ["ignore", "inherit", "inherit"] }).status === 0

/** Redis answers PING with +PONG (false when nothing listens, or no answer within 2 s). */
const redisUp = () =>
  new Promise((resolve) => {
    const socket = createConnection({ host: redisUrl.hostname, port: Number(redisUrl.port || 6379) })
    const done = (up) => {
      socket.destroy()
      resolve(up)
    }
    socket.setTimeout(2_000, () => done(false))
    socket.on("error", () => done(false))
    socket.on("connect", () => socket.write("PING\r\n"))
    socket.on("data", (chunk) => done(chunk.toString("latin1").startsWith("+PONG")))
  })

/** "up", "no database" (the server answers, the suites' admin database is missing) or "down". */
const postgresState = async () => {
  const client = new pg.Client({ connectionString: databaseUrl.toString(), connectionTimeoutMillis: 2_000 })
  client.on("error", () => {})
  try {
    await client.connect()
    return "up"
  } catch (error) {
    // 57P03: it is starting (or recovering): up soon.
    return error?.code === "3D000" ? "no database" : error?.code === "57P03" ? "starting" : "down"
  } finally {
    await client.end().catch(() => {})
  }
}
const postgresUp = async () => !["down", "starting"].includes(await postgresState())

/** Polls `check` for up to 30 s. */
const waitFor = async (check) => {
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if (await check()) return true
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  return false
}

const isLocal = (url) => ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname)

if ((await postgresState()) === "starting" && !(await waitFor(postgresUp))) {
  fail(`PostgreSQL at ${databaseUrl.host} is still starting after 30 s.`)
}
if ((await postgresState()) === "down") {
  const where = `PostgreSQL at ${databaseUrl.host}`
  if (!isLocal(databaseUrl)) fail(`${where} does not answer (TEST_DATABASE_URL); start it and run again.`)
  const versions = existsSync("/etc/postgresql") ? readdirSync("/etc/postgresql") : []
  if (versions.length === 0) fail(`${where} is down and no local cluster is installed (apt-get install postgresql).`)
  if (!isRoot) fail(`${where} is down; start it as root: pg_ctlcluster ${versions[0]} main start`)
  console.log(`Test set-up: starting PostgreSQL ${versions[0]}.`)
  if (!run("pg_ctlcluster", ["--skip-systemctl-redirect", versions[0], "main", "start"])) {
    fail(`${where} is down and pg_ctlcluster ${versions[0]} main start failed (is that cluster on this port?).`)
  }
  if (!(await waitFor(postgresUp))) fail(`${where} did not come up within 30 s.`)
}
if ((await postgresState()) === "no database") {
  // The suites connect to TEST_DATABASE_URL's database to create their own: make it once.
  const name = databaseUrl.pathname.slice(1)
  console.log(`Test set-up: creating the database ${name}.`)
  const client = new pg.Client({ connectionString: new URL("/postgres", databaseUrl).toString() })
  await client.connect()
  await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`)
  await client.end()
}

if (!(await redisUp())) {
  const where = `Redis at ${redisUrl.host}`
  if (!isLocal(redisUrl)) fail(`${where} does not answer (TEST_REDIS_URL); start it and run again.`)
  console.log("Test set-up: starting Redis.")
  const port = redisUrl.port || "6379"
  const started = run("redis-server", ["--daemonize", "yes", "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no"])
  if (!started) fail(`${where} is down and redis-server could not start it (apt-get install redis-server).`)
  if (!(await waitFor(redisUp))) fail(`${where} did not come up within 30 s.`)
}

/**
 * A Debian package the suites run as an outside program (`path`), installed when missing;
 * `override` names the variable that points elsewhere, if any.
 */
const ensurePackage = ({ name, override, path, pkg, why }) => {
  if (existsSync(path)) return
  const how = `apt-get install ${pkg}`
  if (override !== undefined && process.env[override] !== undefined) fail(`no ${name} at ${override}=${path}.`)
  if (!isRoot) fail(`${name} is missing (${path}); ${why}; install Debian's as root: ${how}`)
  console.log(`Test set-up: installing Debian's ${name} (${why}).`)
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
  const apt = (args) => spawnSync("apt-get", args, { stdio: ["ignore", "ignore", "inherit"], env }).status === 0
  if (!apt(["install", "-y", "-qq", pkg]) && !(apt(["update", "-qq"]) && apt(["install", "-y", "-qq", pkg]))) {
    fail(`installing ${name} failed; install it yourself: ${how}`)
  }
  if (!existsSync(path)) fail(`${name} is still missing at ${path} after ${how}`)
}

ensurePackage({
  name: "Chromium",
  override: "CHROMIUM_PATH",
  path: chromiumPath,
  pkg: "chromium",
  why: "the dashboard's browser tests drive it"
})
ensurePackage({
  name: "PgBouncer",
  path: "/usr/sbin/pgbouncer",
  pkg: "pgbouncer",
  why: "a suite runs the service behind it"
})
