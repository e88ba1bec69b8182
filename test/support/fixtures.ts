import { randomUUID } from "node:crypto"
import type { AuthenticatedAgent, OrgActor } from "../../src/Domain/Current.js"
import { AgentId, OrgId, UserId } from "../../src/Domain/Ids.js"
import { newSecret, secretPrefixes } from "../../src/Domain/Secrets.js"
import { sha256Hex } from "../../src/Services/SecretBox/Hashes.js"
import type { TestDatabase } from "./database.js"

/**
 * Direct database fixtures for suites that need people, orgs and credentials without
 * walking the sign-in flows. Secrets are made and hashed exactly as the service does.
 */
export interface SeededUser {
  readonly userId: UserId
  readonly email: string
  readonly sessionToken: string
}

export const seedUser = async (
  db: TestDatabase,
  options: { email?: string; phoneVerified?: boolean } = {}
): Promise<SeededUser> => {
  const userId = UserId.make(randomUUID())
  const email = options.email ?? `user-${userId.slice(0, 8)}@example.com`
  await db.query(
    `INSERT INTO users (id, email, email_verified, phone, phone_verified, created_at)
     VALUES ($1, $2, true, $3, $4, now())`,
    [
      userId,
      email,
      options.phoneVerified ? `+1555${Math.floor(Math.random() * 1e7).toString().padStart(7, "0")}` : null,
      options.phoneVerified ?? false
    ]
  )
  const sessionToken = newSecret(secretPrefixes.session)
  await db.query(
    `INSERT INTO sessions (id, user_id, token_hash, created_at, expires_at, ip, user_agent)
     VALUES ($1, $2, $3, now(), now() + interval '30 days', '127.0.0.1', 'fixtures')`,
    [randomUUID(), userId, sha256Hex(sessionToken)]
  )
  return { userId, email, sessionToken }
}

export interface SeededOrg {
  readonly orgId: OrgId
  readonly owner: SeededUser
}

/** An org with one owner (a fresh user unless given). */
export const seedOrg = async (
  db: TestDatabase,
  options: { plan?: "payg" | "pro" | "max"; owner?: SeededUser; name?: string } = {}
): Promise<SeededOrg> => {
  const owner = options.owner ?? (await seedUser(db, { phoneVerified: true }))
  const orgId = OrgId.make(randomUUID())
  await db.query(`INSERT INTO orgs (id, name, plan, created_at) VALUES ($1, $2, $3, now())`, [
    orgId,
    options.name ?? "Test org",
    options.plan ?? "payg"
  ])
  await addMember(db, orgId, owner.userId, "owner")
  return { orgId, owner }
}

/**
 * The actor a service-tier suite passes for `user` acting in `org` by session, as the
 * credential middleware makes it (`role` as seeded).
 */
export const actorOf = (
  org: SeededOrg,
  user: SeededUser = org.owner,
  role: OrgActor["role"] = "owner",
  plan: OrgActor["org_plan"] = "payg"
): OrgActor => ({
  org_id: org.orgId,
  org_plan: plan,
  user_id: user.userId,
  email: user.email,
  role,
  via: "session",
  session_id: null,
  org_key_id: null,
  org_key_scope: null
})

export const addMember = (db: TestDatabase, orgId: string, userId: string, role: "owner" | "member") =>
  db.query(`INSERT INTO org_members (org_id, user_id, role, created_at) VALUES ($1, $2, $3, now())`, [
    orgId,
    userId,
    role
  ])

export interface SeededAgent {
  readonly agentId: AgentId
  readonly key: string
}

export const seedAgent = async (
  db: TestDatabase,
  orgId: string,
  options: {
    mode?: "test" | "live"
    name?: string
    monthlyBudgetCredits?: bigint
    approvalThresholdCredits?: bigint | null
    ipAllowlist?: Array<string>
    status?: "active" | "disabled"
  } = {}
): Promise<SeededAgent> => {
  const mode = options.mode ?? "test"
  const key = newSecret(mode === "test" ? secretPrefixes.agentTest : secretPrefixes.agentLive)
  const agentId = AgentId.make(randomUUID())
  await db.query(
    `INSERT INTO agents (id, org_id, name, mode, status, monthly_budget_credits, approval_threshold_credits,
                         ip_allowlist, key_hash, key_prefix, key_issued_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now(), now())`,
    [
      agentId,
      orgId,
      options.name ?? "Test agent",
      mode,
      options.status ?? "active",
      (options.monthlyBudgetCredits ?? 50_000n).toString(),
      options.approvalThresholdCredits === undefined ? "20000" : options.approvalThresholdCredits?.toString() ?? null,
      JSON.stringify(options.ipAllowlist ?? []),
      sha256Hex(key),
      key.slice(0, 12)
    ]
  )
  return { agentId, key }
}

/** The agent as its key's credential check reads it now, for a service-tier suite to act as. */
export const agentOf = async (db: TestDatabase, agentId: string): Promise<AuthenticatedAgent> => {
  const [row] = await db.query(
    `SELECT a.id, a.org_id, o.plan, a.name, a.mode, a.monthly_budget_credits, a.approval_threshold_credits, a.key_prefix
     FROM agents a JOIN orgs o ON o.id = a.org_id WHERE a.id = $1`,
    [agentId]
  )
  return {
    id: AgentId.make(row.id),
    org_id: OrgId.make(row.org_id),
    org_plan: row.plan,
    name: row.name,
    mode: row.mode,
    monthly_budget_credits: BigInt(row.monthly_budget_credits),
    approval_threshold_credits: row.approval_threshold_credits === null ? null : BigInt(row.approval_threshold_credits),
    key_prefix: row.key_prefix
  }
}

export const seedOrgKey = async (
  db: TestDatabase,
  orgId: string,
  maker: SeededUser,
  scope: "read" | "write"
): Promise<{ keyId: string; secret: string }> => {
  const secret = newSecret(secretPrefixes.orgKey)
  const keyId = randomUUID()
  await db.query(
    `INSERT INTO org_keys (id, org_id, name, scope, prefix, key_hash, created_by, created_by_email, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now())`,
    [keyId, orgId, `${scope} key`, scope, secret.slice(0, 10), sha256Hex(secret), maker.userId, maker.email]
  )
  return { keyId, secret }
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

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
