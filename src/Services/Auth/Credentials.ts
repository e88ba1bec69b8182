import { Clock, Effect, FiberSet, Option } from "effect"
import { isUuid } from "../../Domain/Ids.js"
import { inAnyRange, type IpRange, parseRange } from "../../Domain/IpRanges.js"
import { sha256Hex } from "../../Domain/Secrets.js"
import { EmailUnverified, Forbidden, IpNotAllowed, NotFound, Unauthenticated } from "../../Errors/ApiErrors.js"
import { CredentialsRepo } from "./CredentialsRepo.js"
import type { AuthenticatedAgent, OrgActor, SessionUser } from "./Current.js"

const USAGE_STAMP_MS = 60_000

/**
 * Checks presented secrets against what is stored (their SHA-256 only) and says who the
 * caller is, with the errors the specification gives for each refusal.
 */
export class Credentials extends Effect.Service<Credentials>()("Auth/Credentials", {
  dependencies: [CredentialsRepo.Default],
  scoped: Effect.gen(function*() {
    const repo = yield* CredentialsRepo
    const background = yield* FiberSet.make()
    // Usage stamps are best-effort and off the request path; this memo spares the database
    // a write per request (the SQL itself also keeps them to once a minute across replicas).
    const lastStamped = new Map<string, number>()
    const stampOnce = (key: string, now: number, write: Effect.Effect<void>) => {
      const previous = lastStamped.get(key)
      if (previous !== undefined && now - previous < USAGE_STAMP_MS) return Effect.void
      lastStamped.set(key, now)
      if (lastStamped.size > 100_000) lastStamped.clear()
      return FiberSet.run(
        background,
        write.pipe(Effect.catchAllCause((cause) => Effect.logWarning("usage stamp", cause)))
      )
        .pipe(Effect.asVoid)
    }

    const invalidAgentKey = new Unauthenticated({ message: "Invalid or revoked API key" })

    /** An agent key: known, agent active, caller address on its allowlist. */
    const authenticateAgentKey = (token: string, address: string) =>
      Effect.gen(function*() {
        const row = yield* repo.agentByKeyHash(sha256Hex(token))
        if (Option.isNone(row) || row.value.status !== "active") return yield* invalidAgentKey
        const agent = row.value
        if (agent.ip_allowlist.length > 0) {
          const ranges = agent.ip_allowlist.flatMap((entry): Array<IpRange> => {
            const range = parseRange(entry)
            return range ? [range] : []
          })
          if (!inAnyRange(address, ranges)) {
            return yield* new IpNotAllowed({ message: `Address ${address} is not on this agent's allowlist` })
          }
        }
        const now = yield* Clock.currentTimeMillis
        yield* stampOnce(`agent:${agent.id}:${address}`, now, repo.touchAgentKey(agent.id, address, new Date(now)))
        return {
          id: agent.id,
          org_id: agent.org_id,
          org_plan: agent.org_plan,
          name: agent.name,
          mode: agent.mode,
          monthly_budget_credits: agent.monthly_budget_credits,
          approval_threshold_credits: agent.approval_threshold_credits,
          key_prefix: agent.key_prefix
        } satisfies AuthenticatedAgent
      })

    /** A live session token (header or cookie). */
    const authenticateSession = (token: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const row = yield* repo.sessionByTokenHash(sha256Hex(token), new Date(now))
        if (Option.isNone(row)) return yield* new Unauthenticated({ message: "Invalid, expired or signed-out session" })
        // Every sign-in proves the address; an account whose address was never proven acts on nothing.
        if (!row.value.email_verified) {
          return yield* new EmailUnverified({
            message: "Verify your email address first: sign in with the emailed link"
          })
        }
        return {
          user_id: row.value.user_id,
          email: row.value.email,
          session_id: row.value.session_id
        } satisfies SessionUser
      })

    /** A session acting on an org it must belong to. */
    const sessionActor = (token: string, orgId: string) =>
      Effect.gen(function*() {
        const user = yield* authenticateSession(token)
        // Orgs the person does not belong to are answered as if they did not exist.
        const membership = isUuid(orgId) ? yield* repo.membership(orgId, user.user_id) : Option.none()
        if (Option.isNone(membership)) return yield* new NotFound({ message: "No such org" })
        return {
          org_id: membership.value.org_id,
          org_plan: membership.value.org_plan,
          user_id: user.user_id,
          email: user.email,
          role: membership.value.role,
          via: "session",
          session_id: user.session_id,
          org_key_id: null,
          org_key_scope: null
        } satisfies OrgActor
      })

    const unknownOrgKey = new Unauthenticated({ message: "Unknown or revoked org key" })

    /** A working org key (any org, any scope), or 401 when unknown or revoked. */
    const knownOrgKey = (token: string) =>
      Effect.flatMap(
        repo.orgKeyByHash(sha256Hex(token)),
        (row) => Option.isNone(row) ? Effect.fail(unknownOrgKey) : Effect.succeed(row.value)
      )

    /** An org key acting on its own org, within its scope. */
    const orgKeyActor = (token: string, orgId: string, method: string) =>
      Effect.gen(function*() {
        const key = yield* knownOrgKey(token)
        if (key.org_id !== orgId) {
          return yield* new Forbidden({ message: "An org key works only under /v1/orgs/{orgId}/... of its own org" })
        }
        if (key.scope === "read" && method !== "GET") {
          return yield* new Forbidden({ message: "This org key is read-only" })
        }
        const now = yield* Clock.currentTimeMillis
        yield* stampOnce(`orgkey:${key.id}`, now, repo.touchOrgKey(key.id, new Date(now)))
        return {
          org_id: key.org_id,
          org_plan: key.org_plan,
          user_id: key.user_id,
          email: key.email,
          role: key.role,
          via: "org_key",
          session_id: null,
          org_key_id: key.id,
          org_key_scope: key.scope
        } satisfies OrgActor
      })

    return { authenticateAgentKey, authenticateSession, sessionActor, orgKeyActor, knownOrgKey } as const
  })
}) {}
