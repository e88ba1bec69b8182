import { PgClient } from "@effect/sql-pg"
import { ConfigProvider, Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import { newSecret, secretPrefixes, sha256Hex } from "../../src/Domain/Secrets.js"
import { Ledger } from "../../src/Services/Ledger/Ledger.js"
import { LedgerStandaloneLive } from "../../src/Services/Ledger/LedgerStandalone.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { bearer, seedAgent, type SeededAgent, type SeededOrg, seedOrg } from "../support/fixtures.js"
import { request, startServer, type TestServer } from "../support/server.js"
import { startSmtp, type TestSmtp } from "../support/smtp.js"

/**
 * A purchasing world: a database, the service (with a real SMTP server on loopback for
 * the owners' mails) and helpers to call it as an agent, an owner or an administrator.
 */
export interface World {
  readonly db: TestDatabase
  server: TestServer
  readonly smtp: TestSmtp
  readonly env: Record<string, string>
  readonly close: () => Promise<void>
  /** Stops the service and starts it again on the same database (a restart). */
  readonly restart: (extraEnv?: Record<string, string>) => Promise<void>
}

export const startWorld = async (label: string, env: Record<string, string> = {}): Promise<World> => {
  const db = await createTestDatabase(label)
  const smtp = await startSmtp()
  const fullEnv = { DATABASE_URL: db.url, SMTP_URL: smtp.url, JOB_POLL_INTERVAL_MS: "100", ...env }
  const world: World = {
    db,
    smtp,
    env: fullEnv,
    server: await startServer(fullEnv),
    close: async () => {
      await world.server?.close()
      await smtp.close()
      await db.drop()
    },
    restart: async (extraEnv = {}) => {
      await world.server.close()
      world.server = await startServer({ ...fullEnv, ...extraEnv })
    }
  }
  return world
}

export interface Call {
  readonly status: number
  readonly json: any
  readonly text: string
  readonly headers: Headers
}

export const call = (
  world: World,
  method: string,
  path: string,
  options: { token?: string; body?: unknown } = {}
): Promise<Call> =>
  request(`${world.server.url}${path}`, {
    method,
    headers: options.token === undefined ? {} : bearer(options.token),
    body: options.body
  })

export interface Buyer {
  readonly org: SeededOrg
  readonly agent: SeededAgent
}

/** An org with an owner and a (test, by default) agent. */
export const seedBuyer = async (
  world: World,
  options: Parameters<typeof seedAgent>[2] & { plan?: "payg" | "pro" | "max" } = {}
): Promise<Buyer> => {
  const org = await seedOrg(world.db, { plan: options.plan ?? "payg" })
  const agent = await seedAgent(world.db, org.orgId, {
    approvalThresholdCredits: null,
    monthlyBudgetCredits: 10_000_000n,
    ...options
  })
  return { org, agent }
}

/** An administrator with a live session, written straight into the database. */
export const seedAdmin = async (db: TestDatabase): Promise<{ adminId: string; token: string }> => {
  const adminId = randomUUID()
  await db.query(
    `INSERT INTO admins (id, email, password_hash, totp_sealed, created_at) VALUES ($1, $2, 'unused', 'unused', now())`,
    [adminId, `admin-${adminId.slice(0, 8)}@example.com`]
  )
  const token = newSecret(secretPrefixes.adminSession)
  await db.query(
    `INSERT INTO admin_sessions (id, admin_id, token_hash, created_at, expires_at, ip, user_agent)
     VALUES ($1, $2, $3, now(), now() + interval '1 day', '127.0.0.1', 'tests')`,
    [randomUUID(), adminId, sha256Hex(token)]
  )
  return { adminId, token }
}

/** The ledger on the world's database (top-ups for live purchases). */
export const ledgerOf = (db: TestDatabase) =>
  ManagedRuntime.make(
    LedgerStandaloneLive.pipe(
      Layer.provideMerge(PgClient.layer({ url: Redacted.make(db.url), maxConnections: 2 })),
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["LOG_LEVEL", "Warn"]]))))
    )
  )

export const topUp = (db: TestDatabase, orgId: string, credits: bigint) =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const runtime = ledgerOf(db)
    yield* Effect.addFinalizer(() => Effect.promise(() => runtime.dispose()))
    return yield* Effect.promise(() =>
      runtime.runPromise(Effect.flatMap(Ledger, (ledger) => ledger.credit(orgId, credits, "top_up", "test top-up")))
    )
  })))

/** Polls until `check` answers something truthy (or fails after `timeoutMs`). */
export const eventually = async <A>(check: () => Promise<A | undefined | false>, timeoutMs = 30_000): Promise<A> => {
  const started = Date.now()
  for (;;) {
    const value = await check()
    if (value) return value
    if (Date.now() - started > timeoutMs) throw new Error("condition not reached in time")
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Inputs for a tool of each task type, with an optional marker (see MockTools). */
export const emailFindInput = (i: number, marker = "") => ({
  first_name: `Jane${i}`,
  last_name: "Doe",
  domain: marker.length > 0 ? `${marker}.example.com` : `acme${i}.example.com`
})

/** The agent's events of a type, oldest first. */
export const eventsOf = (db: TestDatabase, orgId: string, type: string) =>
  db.query(`SELECT data FROM events WHERE org_id = $1 AND type = $2 ORDER BY seq`, [orgId, type]).then((rows) =>
    rows.map((row) => row.data)
  )
