import { Context } from "effect"
import type { AdminId, AgentId, OrgId, UserId } from "./Ids.js"
import type { PlanId } from "./Plans.js"

/** Who is calling, as the credential middlewares establish it for one request. */

export interface AuthenticatedAgent {
  readonly id: AgentId
  readonly org_id: OrgId
  readonly org_plan: PlanId
  readonly name: string
  readonly mode: "test" | "live"
  readonly monthly_budget_credits: bigint
  readonly approval_threshold_credits: bigint | null
  readonly key_prefix: string
  /**
   * Set when the agent was read from this replica's credential cache in this request
   * rather than from the database: what the cache held, for the request's first write to
   * check again (a gateway call's hold does, see Credentials.ts).
   */
  readonly cached?: CachedCredential
}

export interface CachedCredential {
  readonly key_hash: string
  readonly ip_allowlist: ReadonlyArray<string>
  /** The request's address, to check the allowlist again when the key is read again. */
  readonly address: string
}

/** An agent key holder on an agent endpoint. */
export class CurrentAgent extends Context.Tag("Auth/CurrentAgent")<CurrentAgent, AuthenticatedAgent>() {}

export type OrgRole = "owner" | "member"

export interface OrgActor {
  readonly org_id: OrgId
  readonly org_plan: PlanId
  readonly user_id: UserId
  readonly email: string
  /** The person's current role; an org key acts with its maker's current role. */
  readonly role: OrgRole
  readonly via: "session" | "org_key"
  readonly session_id: string | null
  readonly org_key_id: string | null
  readonly org_key_scope: "read" | "write" | null
}

/** A person (session) or script (org key) acting on `/v1/orgs/{orgId}/...`. */
export class CurrentActor extends Context.Tag("Auth/CurrentActor")<CurrentActor, OrgActor>() {}

export interface SessionUser {
  readonly user_id: UserId
  readonly email: string
  readonly session_id: string
}

/** A signed-in person on an account endpoint. */
export class CurrentUser extends Context.Tag("Auth/CurrentUser")<CurrentUser, SessionUser>() {}

export interface AdminUser {
  readonly admin_id: AdminId
  readonly email: string
  readonly session_id: string
}

/** A signed-in administrator on an admin endpoint. */
export class CurrentAdmin extends Context.Tag("Auth/CurrentAdmin")<CurrentAdmin, AdminUser>() {}
