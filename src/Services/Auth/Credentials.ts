import { Cache, Clock, Config, Duration, Effect, Either, Exit, FiberSet, Option } from "effect"
import type { AuthenticatedAgent, CachedCredential, OrgActor, SessionUser } from "../../Domain/Current.js"
import type { OrgId } from "../../Domain/Ids.js"
import { inAnyRange, type IpRange, parseRange } from "../../Domain/IpRanges.js"
import { EmailUnverified, Forbidden, IpNotAllowed, NotFound, Unauthenticated } from "../../Errors/ApiErrors.js"
import { sha256Hex } from "../SecretBox/Hashes.js"
import { type AgentKeyRow, CredentialsRepo, StaleCredential } from "./CredentialsRepo.js"
import { makeUsageStamps } from "./UsageStamps.js"

const isStale = (error: unknown): error is StaleCredential => error instanceof StaleCredential

const fromDatabase = (row: Option.Option<AgentKeyRow>) => Option.map(row, (found) => ({ row: found, fromCache: false }))

/**
 * Checks presented secrets against what is stored (their SHA-256 only) and says who the
 * caller is, with the errors the specification gives for each refusal.
 */
export class Credentials extends Effect.Service<Credentials>()("Auth/Credentials", {
  dependencies: [CredentialsRepo.Default],
  scoped: Effect.gen(function*() {
    const repo = yield* CredentialsRepo
    const agentKeyCacheMs = yield* Config.integer("AGENT_KEY_CACHE_MS").pipe(Config.withDefault(30_000))
    const background = yield* FiberSet.make()
    // Usage stamps are best-effort and off the request path, at most once a minute.
    const stamps = yield* makeUsageStamps
    const stampOnce = (key: string, write: Effect.Effect<void>) =>
      Effect.flatMap(stamps.due(key), (due) =>
        due
          ? FiberSet.run(
            background,
            write.pipe(Effect.catchAllCause((cause) => Effect.logWarning("usage stamp", cause)))
          ).pipe(Effect.asVoid)
          : Effect.void)

    const invalidAgentKey = new Unauthenticated({ message: "Invalid or revoked API key" })

    // Agents' key rows, for the endpoints whose first write checks them again (a gateway
    // call's hold, a purchase's write: `stillValid`), so such a request reads no key row at
    // all. A revoked, rotated or disabled key, a changed allowlist, mode, plan, budget or
    // approval threshold is caught by that check in every replica at once; the cache only
    // spares the read. Only an active agent's row is kept: a refusal kept in the cache could
    // not be undone by an enable elsewhere until the entry expired.
    const agentKeys = yield* Cache.makeWith({
      capacity: 10_000,
      lookup: (hash: string) => repo.agentByKeyHash(hash),
      timeToLive: (exit) =>
        Exit.isSuccess(exit) && Option.isSome(exit.value) && exit.value.value.status === "active"
          ? Duration.millis(agentKeyCacheMs)
          : Duration.zero
    })

    /**
     * The key row by its hash: from the cache when the endpoint checks it again
     * (`cachedModes` names the agent's mode), else from the database. One read of the cache
     * a request; a row kept for another mode is read again, as it was never cached for this.
     */
    const agentKeyRow = (hash: string, cachedModes: ReadonlyArray<AgentKeyRow["mode"]>) => {
      if (cachedModes.length === 0 || agentKeyCacheMs <= 0) return Effect.map(repo.agentByKeyHash(hash), fromDatabase)
      return Effect.flatMap(agentKeys.getEither(hash), (found) => {
        if (Either.isRight(found)) return Effect.succeed(fromDatabase(found.right))
        const row = found.left
        // A refusal is never served from the cache: its entry lives to the end of the
        // millisecond it was read in (a zero time to live), and an enable may come within it.
        if (Option.isSome(row) && row.value.status !== "active") {
          return Effect.zipRight(agentKeys.invalidate(hash), Effect.map(agentKeys.get(hash), fromDatabase))
        }
        return Option.isSome(row) && cachedModes.includes(row.value.mode)
          ? Effect.succeed(Option.some({ row: row.value, fromCache: true }))
          : Effect.map(repo.agentByKeyHash(hash), fromDatabase)
      })
    }

    const agentOf = (
      hash: string | undefined,
      address: string,
      now: number,
      found: Option.Option<{
        readonly row: AgentKeyRow
        readonly fromCache: boolean
      }>
    ) =>
      Effect.gen(function*() {
        if (Option.isNone(found) || found.value.row.status !== "active") return yield* invalidAgentKey
        const { fromCache, row: agent } = found.value
        if (agent.ip_allowlist.length > 0) {
          const ranges = agent.ip_allowlist.flatMap((entry): Array<IpRange> => {
            const range = parseRange(entry)
            return range ? [range] : []
          })
          if (!inAnyRange(address, ranges)) {
            return yield* new IpNotAllowed({ message: `Address ${address} is not on this agent's allowlist` })
          }
        }
        // The key's last use is the key's: a grant keeps its own (OAuth/Connections.ts).
        if (hash !== undefined) {
          yield* stampOnce(`agent:${agent.id}:${address}`, repo.touchAgentKey(agent.id, address, new Date(now)))
        }
        return {
          id: agent.id,
          org_id: agent.org_id,
          org_plan: agent.org_plan,
          name: agent.name,
          mode: agent.mode,
          monthly_budget_credits: agent.monthly_budget_credits,
          approval_threshold_credits: agent.approval_threshold_credits,
          key_prefix: agent.key_prefix,
          ...(fromCache && hash !== undefined
            ? { cached: { key_hash: hash, ip_allowlist: agent.ip_allowlist, address } }
            : {})
        } satisfies AuthenticatedAgent
      })

    /**
     * An agent key: known, agent active, caller address on its allowlist. With
     * `cachedModes`, the key row of an agent in one of those modes may come from this
     * replica's cache (AGENT_KEY_CACHE_MS); the answer then carries `cached` and the caller
     * must check it with `stillValid` (see `readAgainWhenStale`).
     */
    const authenticateAgentKey = (
      token: string,
      address: string,
      options?: { readonly cachedModes?: ReadonlyArray<AgentKeyRow["mode"]> }
    ) =>
      Effect.gen(function*() {
        const hash = sha256Hex(token)
        const now = yield* Clock.currentTimeMillis
        return yield* agentOf(hash, address, now, yield* agentKeyRow(hash, options?.cachedModes ?? []))
      })

    /**
     * The agent an OAuth grant acts as (the grant names the agent, not its key): the same
     * checks and the same answer as its key would get (active, caller on the allowlist), read
     * from the database each time, never from the cache.
     */
    const authenticateAgentById = (agentId: string, address: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const row = yield* repo.agentById(agentId)
        return yield* agentOf(undefined, address, now, fromDatabase(row))
      })

    /** The agent of a cached credential read again from the database (its check found it changed). */
    const recheckAgentKey = (cached: CachedCredential) =>
      Effect.gen(function*() {
        yield* agentKeys.invalidate(cached.key_hash)
        const now = yield* Clock.currentTimeMillis
        return yield* agentOf(cached.key_hash, cached.address, now, yield* agentKeyRow(cached.key_hash, []))
      })

    /**
     * Cached credentials checked again in one statement, in the transaction of the writes
     * they pay for (a batch of gateway calls' holds, a purchase's): for each agent, true
     * when it was not from the cache, or the key is still the agent's, the agent active, and
     * its mode, allowlist, budget, approval threshold and org plan the ones the cache held.
     */
    const stillValid = (agents: ReadonlyArray<AuthenticatedAgent>) =>
      Effect.gen(function*() {
        const checks = agents.flatMap((agent, idx) =>
          agent.cached === undefined ? [] : [{
            idx,
            agent_id: agent.id,
            key_hash: agent.cached.key_hash,
            mode: agent.mode,
            org_plan: agent.org_plan,
            ip_allowlist: agent.cached.ip_allowlist,
            monthly_budget_credits: agent.monthly_budget_credits.toString(),
            approval_threshold_credits: agent.approval_threshold_credits?.toString() ?? null
          }]
        )
        const valid = checks.length === 0 ? new Set<number>() : yield* repo.stillValid(checks)
        return agents.map((agent, idx) => agent.cached === undefined || valid.has(idx))
      })

    /**
     * Runs a request for `agent`. An agent from the credential cache whose check in the
     * request's first write found it changed (StaleCredential: nothing was written) is read
     * again from the database and the request run once more for what the agent is now. An
     * agent not from the cache is never stale.
     */
    const readAgainWhenStale = <A, E, R>(
      agent: AuthenticatedAgent,
      attempt: (agent: AuthenticatedAgent) => Effect.Effect<A, E, R>
    ) =>
      Effect.catchIf(
        attempt(agent),
        isStale,
        (stale) =>
          agent.cached === undefined
            ? Effect.die(stale)
            : Effect.flatMap(
              recheckAgentKey(agent.cached),
              (fresh) => Effect.catchIf(attempt({ ...fresh, cached: undefined }), isStale, Effect.die)
            )
      ) as Effect.Effect<A, Exclude<E, StaleCredential> | Unauthenticated | IpNotAllowed, R>

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

    /**
     * A session acting on an org it must belong to; `null` when the request named no org (its
     * text is not an org id), answered as an org the person does not belong to.
     */
    const sessionActor = (token: string, orgId: OrgId | null) =>
      Effect.gen(function*() {
        const user = yield* authenticateSession(token)
        // Orgs the person does not belong to are answered as if they did not exist.
        const membership = orgId === null ? Option.none() : yield* repo.membership(orgId, user.user_id)
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
        yield* stampOnce(`orgkey:${key.id}`, repo.touchOrgKey(key.id, new Date(now)))
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

    return {
      authenticateAgentKey,
      authenticateAgentById,
      stillValid,
      readAgainWhenStale,
      authenticateSession,
      sessionActor,
      orgKeyActor,
      knownOrgKey
    } as const
  })
}) {}
