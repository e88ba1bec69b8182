import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import type { Agent } from "../../Domain/Agent.js"
import type { OrgActor } from "../../Domain/Current.js"
import { AgentId } from "../../Domain/Ids.js"
import { parseRange } from "../../Domain/IpRanges.js"
import { type PlanId, plans } from "../../Domain/Plans.js"
import { newSecret, secretPrefixes } from "../../Domain/Secrets.js"
import { currentDate } from "../../Domain/Timestamps.js"
import { InvalidInput, NotFound, PlanLimit } from "../../Errors/ApiErrors.js"
import { OrgsRepo } from "../Orgs/OrgsRepo.js"
import { sha256Hex } from "../SecretBox/Hashes.js"
import { AgentsRepo } from "./AgentsRepo.js"

/** Defaults of the specification's Agent record. */
export const agentDefaults = {
  mode: "test" as const,
  monthlyBudgetCredits: 50_000n,
  approvalThresholdCredits: 20_000n
}

export const MAX_ALLOWLIST_ENTRIES = 100
export const AGENT_KEY_PREFIX_LENGTH = 12

export const keyNote =
  "This key is shown only now: store it somewhere safe. The service keeps only its SHA-256 hash; if it is lost, rotate the key."

/**
 * Checks every allowlist entry (IPv4 or IPv6 address, or CIDR range); the first that is
 * neither is named in a 400 `invalid_input`. `[]` clears the list.
 */
export const validateAllowlist = (entries: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    if (entries.length > MAX_ALLOWLIST_ENTRIES) {
      return yield* new InvalidInput({ message: `ip_allowlist takes at most ${MAX_ALLOWLIST_ENTRIES} entries` })
    }
    const cleaned: Array<string> = []
    for (const entry of entries) {
      const text = entry.trim()
      if (parseRange(text) === undefined) {
        return yield* new InvalidInput({
          message: `ip_allowlist entry ${JSON.stringify(entry)} is not an IPv4 or IPv6 address or CIDR range`
        })
      }
      if (!cleaned.includes(text)) cleaned.push(text)
    }
    return cleaned
  })

const newAgentKey = (mode: "test" | "live") => {
  const key = newSecret(mode === "test" ? secretPrefixes.agentTest : secretPrefixes.agentLive)
  return { key, hash: sha256Hex(key), prefix: key.slice(0, AGENT_KEY_PREFIX_LENGTH) }
}

const agentLimit = (plan: PlanId) =>
  new PlanLimit({
    message: `The ${plans[plan].name} plan allows ${
      plans[plan].max_active_agents
    } active agents; disable one or change plan`
  })

const noSuchAgent = new NotFound({ message: "No such agent in this org" })

export interface AgentChanges {
  readonly name?: string | undefined
  readonly status?: "active" | "disabled" | undefined
  readonly monthlyBudgetCredits?: bigint | undefined
  /** undefined: unchanged; null: never ask. */
  readonly approvalThresholdCredits?: bigint | null | undefined
  readonly ipAllowlist?: ReadonlyArray<string> | undefined
}

/** The record with the changes given (undefined: unchanged). */
const changed = (agent: Agent, changes: AgentChanges) => ({
  ...agent,
  name: changes.name ?? agent.name,
  status: changes.status ?? agent.status,
  monthly_budget_credits: changes.monthlyBudgetCredits ?? agent.monthly_budget_credits,
  approval_threshold_credits: changes.approvalThresholdCredits === undefined
    ? agent.approval_threshold_credits
    : changes.approvalThresholdCredits,
  ip_allowlist: changes.ipAllowlist ?? agent.ip_allowlist
})

export interface NewAgentInput {
  readonly name: string
  readonly mode?: "test" | "live" | undefined
  readonly monthlyBudgetCredits?: bigint | undefined
  readonly approvalThresholdCredits?: bigint | null | undefined
  readonly ipAllowlist?: ReadonlyArray<string> | undefined
}

/** Agents and their keys; any member (session or write key) may manage them. */
export class Agents extends Effect.Service<Agents>()("Agents/Agents", {
  dependencies: [AgentsRepo.Default, OrgsRepo.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* AgentsRepo
    const orgs = yield* OrgsRepo
    const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      effect.pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    /** The org's plan, with the org row locked so limit checks cannot race. */
    const lockedPlan = (orgId: string) =>
      Effect.flatMap(orgs.lockOrg(orgId), (org) =>
        Option.match(org, {
          onNone: () => Effect.fail(new NotFound({ message: "No such org" })),
          onSome: (row) => Effect.succeed(row.plan)
        }))

    const create = (actor: OrgActor, input: NewAgentInput) =>
      Effect.gen(function*() {
        const ipAllowlist = yield* validateAllowlist(input.ipAllowlist ?? [])
        const mode = input.mode ?? agentDefaults.mode
        const key = newAgentKey(mode)
        const row = yield* transaction(Effect.gen(function*() {
          const plan = yield* lockedPlan(actor.org_id)
          if ((yield* repo.countActive(actor.org_id)) >= plans[plan].max_active_agents) return yield* agentLimit(plan)
          const at = yield* currentDate
          return yield* repo.insert({
            id: AgentId.make(randomUUID()),
            org_id: actor.org_id,
            name: input.name,
            mode,
            status: "active",
            monthly_budget_credits: input.monthlyBudgetCredits ?? agentDefaults.monthlyBudgetCredits,
            approval_threshold_credits: input.approvalThresholdCredits === undefined
              ? agentDefaults.approvalThresholdCredits
              : input.approvalThresholdCredits,
            ip_allowlist: ipAllowlist,
            key_prefix: key.prefix,
            key_hash: key.hash,
            key_issued_at: at,
            created_at: at
          })
        }))
        return { agent: row, key: key.key, key_note: keyNote }
      })

    /** A page of the org's agents, newest first; `has_more` when a page follows (one row more is read). */
    const list = (actor: OrgActor, limit: number, startingAfter: AgentId | undefined) =>
      Effect.map(
        repo.list(actor.org_id, limit + 1, startingAfter),
        (rows) => ({ agents: rows.slice(0, limit), has_more: rows.length > limit })
      )

    const get = (actor: OrgActor, agentId: AgentId) =>
      Effect.gen(function*() {
        const row = yield* repo.find(actor.org_id, agentId)
        if (Option.isNone(row)) return yield* noSuchAgent
        return row.value
      })

    /** Changes any of name, status, budget, threshold and allowlist; mode is fixed. */
    const update = (actor: OrgActor, agentId: AgentId, changes: AgentChanges) =>
      Effect.gen(function*() {
        const ipAllowlist = changes.ipAllowlist === undefined
          ? undefined
          : yield* validateAllowlist(changes.ipAllowlist)
        const row = yield* transaction(Effect.gen(function*() {
          const plan = yield* lockedPlan(actor.org_id)
          const current = yield* repo.findForUpdate(actor.org_id, agentId)
          if (Option.isNone(current)) return yield* noSuchAgent
          if (changes.status === "active" && current.value.status === "disabled") {
            if ((yield* repo.countActive(actor.org_id)) >= plans[plan].max_active_agents) return yield* agentLimit(plan)
          }
          return yield* repo.update(changed(current.value, { ...changes, ipAllowlist }))
        }))
        return row
      })

    /** Issues a new key (also for an agent without one); the old key is refused at once. */
    const rotateKey = (actor: OrgActor, agentId: AgentId) =>
      Effect.gen(function*() {
        return yield* transaction(Effect.gen(function*() {
          const current = yield* repo.findForUpdate(actor.org_id, agentId)
          if (Option.isNone(current)) return yield* noSuchAgent
          const key = newAgentKey(current.value.mode)
          yield* repo.setKey(agentId, { hash: key.hash, prefix: key.prefix }, yield* currentDate)
          return { key: key.key, key_note: keyNote }
        }))
      })

    /** Removes the agent's key; it cannot buy until rotate-key issues a new one. */
    const revokeKey = (actor: OrgActor, agentId: AgentId) =>
      Effect.gen(function*() {
        return yield* transaction(Effect.gen(function*() {
          const current = yield* repo.findForUpdate(actor.org_id, agentId)
          if (Option.isNone(current)) return yield* noSuchAgent
          yield* repo.setKey(agentId, null, yield* currentDate)
          return { status: "revoked" as const }
        }))
      })

    /** The calling agent's own record (`GET /v1/agent`). */
    const self = (agentId: AgentId) =>
      Effect.flatMap(
        repo.byId(agentId),
        Option.match({
          onNone: () => Effect.fail(noSuchAgent),
          onSome: Effect.succeed
        })
      )

    return { create, list, get, update, rotateKey, revokeKey, self } as const
  })
}) {}
