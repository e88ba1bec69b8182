import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import { currentDate } from "../../Domain/Timestamps.js"
import { failedGates, gateMessages, priceAt, type ToolGate } from "../../Domain/ToolGates.js"
import {
  AdapterNotReady,
  BelowAccuracyFloor,
  BenchmarkMissing,
  Conflict,
  InvalidAmount,
  InvalidInput,
  NotFound,
  PriceMissing,
  ReasonRequired,
  ResaleRightsMissing
} from "../../Errors/ApiErrors.js"
import { CatalogueRepo } from "../Catalogue/CatalogueRepo.js"
import { Events } from "../Events/Events.js"
import { type AuditActor, AuditLog } from "../Operations/AuditLog.js"
import { Providers } from "../Providers/Providers.js"
import { type ToolFields, type ToolRow, ToolsRepo } from "./ToolsRepo.js"

/**
 * The administrators' side of tools: create and edit them, make them live through the
 * publishing gates, pause and resume them, schedule price changes, and check their adapters.
 * Every action is written to the audit log in the transaction of its effect.
 *
 * - Publishing and resuming check every gate with a fresh adapter health check and answer
 *   the first that fails (409 resale_rights_missing, price_missing, adapter_not_ready,
 *   benchmark_missing, below_accuracy_floor).
 * - Pausing needs a reason (400 reason_required) and sends `tool.paused` to every org that
 *   bought from the tool in the last 30 days.
 * - A price change takes effect at `valid_from` (now when absent, never earlier) and sends
 *   `price.changed` to the same orgs; a change not yet in effect is replaced by a newer one.
 * - Adapters of live tools are checked on a schedule (AdapterChecks.ts); a failed check makes
 *   the tool unavailable until a check passes again.
 */
const RECENT_USE_MS = 30 * 86_400_000

type GateError = ResaleRightsMissing | PriceMissing | AdapterNotReady | BenchmarkMissing | BelowAccuracyFloor

const gateErrors: { readonly [G in ToolGate]: (message: string) => GateError } = {
  resale_rights_missing: (message) => new ResaleRightsMissing({ message }),
  price_missing: (message) => new PriceMissing({ message }),
  adapter_not_ready: (message) => new AdapterNotReady({ message }),
  benchmark_missing: (message) => new BenchmarkMissing({ message }),
  below_accuracy_floor: (message) => new BelowAccuracyFloor({ message })
}

/** What the audit log keeps of a tool. */
const snapshot = (row: ToolRow) => ({
  slug: row.slug,
  name: row.name,
  status: row.status,
  paused_reason: row.paused_reason,
  resale_rights: row.resale_rights,
  price_per_success_credits: row.price_per_success_credits,
  next_price_credits: row.next_price_credits,
  next_price_from: row.next_price_from,
  gateway_endpoint: row.gateway_endpoint,
  adapter_ok: row.adapter_ok
})

export class ToolAdmin extends Effect.Service<ToolAdmin>()("Tools/ToolAdmin", {
  dependencies: [ToolsRepo.Default, CatalogueRepo.Default, Providers.Default, AuditLog.Default, Events.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* ToolsRepo
    const catalogue = yield* CatalogueRepo
    const providers = yield* Providers
    const audit = yield* AuditLog
    const events = yield* Events

    const toolOr404 = (ref: string) =>
      Effect.flatMap(repo.byRef(ref), (found) =>
        Option.match(found, {
          onNone: () => new NotFound({ message: `No tool with id or slug ${JSON.stringify(ref)}` }),
          onSome: Effect.succeed
        }))

    /** Runs the adapter's health check now and keeps the result on the tool. */
    const checkAdapter = (row: ToolRow) =>
      Effect.gen(function*() {
        const endpoint = yield* catalogue.endpoint(row.gateway_endpoint)
        const health = Option.isNone(endpoint)
          ? { ok: false, problem: `no catalogue endpoint ${row.gateway_endpoint}` }
          : yield* providers.health(endpoint.value)
        yield* repo.setAdapterHealth(row.id, health.ok, health.problem, yield* currentDate)
        return health
      })

    /** Every gate with a fresh adapter check: the first failing gate's error, else the row. */
    const passGates = (row: ToolRow) =>
      Effect.gen(function*() {
        const health = yield* checkAdapter(row)
        const at = yield* currentDate
        const failed = failedGates({
          resale_rights: row.resale_rights,
          price: priceAt(row, at),
          adapter_ok: health.ok,
          benchmark: row.latest_benchmark_date === null || row.latest_accuracy === null
            ? null
            : { date: row.latest_benchmark_date, accuracy: row.latest_accuracy }
        }, at)
        const first = failed[0]
        if (first === undefined) return
        const detail = first === "adapter_not_ready"
          ? `: ${health.problem}`
          : first === "below_accuracy_floor"
          ? ` (latest accuracy ${row.latest_accuracy} on ${row.latest_benchmark_date})`
          : first === "benchmark_missing" && row.latest_benchmark_date !== null
          ? ` (latest ${row.latest_benchmark_date})`
          : ""
        return yield* gateErrors[first](`${row.slug} cannot be sold: ${gateMessages[first]}${detail}`)
      })

    /** One administrator action on one tool: locked, audited, in one transaction. */
    const act = <A, E, R>(
      actor: AuditActor,
      ref: string,
      action: string,
      reason: string | null,
      change: (row: ToolRow) => Effect.Effect<A, E, R>
    ) =>
      sql.withTransaction(Effect.gen(function*() {
        const found = yield* toolOr404(ref)
        yield* repo.lock(found.id)
        const before = Option.getOrThrow(yield* repo.byRef(found.id))
        const result = yield* change(before)
        const after = Option.getOrThrow(yield* repo.byRef(found.id))
        yield* audit.record(actor, {
          action,
          target_type: "tool",
          target_id: found.id,
          reason,
          before: snapshot(before),
          after: snapshot(after)
        })
        return { result, tool: after }
      })).pipe(Effect.catchTag("SqlError", Effect.die))

    const create = (actor: AuditActor, fields: ToolFields) =>
      Effect.gen(function*() {
        const id = randomUUID()
        return yield* sql.withTransaction(Effect.gen(function*() {
          if (Option.isSome(yield* repo.byRef(fields.slug))) {
            return yield* new Conflict({ message: `A tool with slug ${fields.slug} exists` })
          }
          if (Option.isNone(yield* catalogue.endpoint(fields.gateway_endpoint))) {
            return yield* new InvalidInput({
              message: `gateway_endpoint ${fields.gateway_endpoint} is not in the catalogue`
            })
          }
          yield* repo.insert(id, fields)
          const row = Option.getOrThrow(yield* repo.byRef(id))
          yield* audit.record(actor, {
            action: "tool.create",
            target_type: "tool",
            target_id: id,
            after: snapshot(row)
          })
          return row
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

    const update = (actor: AuditActor, ref: string, fields: Partial<ToolFields>) =>
      act(actor, ref, "tool.update", null, (row) =>
        Effect.gen(function*() {
          if (fields.slug !== undefined && fields.slug !== row.slug) {
            if (Option.isSome(yield* repo.byRef(fields.slug))) {
              return yield* new Conflict({ message: `A tool with slug ${fields.slug} exists` })
            }
          }
          if (fields.gateway_endpoint !== undefined) {
            if (Option.isNone(yield* catalogue.endpoint(fields.gateway_endpoint))) {
              return yield* new InvalidInput({
                message: `gateway_endpoint ${fields.gateway_endpoint} is not in the catalogue`
              })
            }
          }
          yield* repo.update(row.id, fields)
        })).pipe(Effect.map(({ tool }) => tool))

    const publish = (actor: AuditActor, ref: string) =>
      act(actor, ref, "tool.publish", null, (row) =>
        Effect.gen(function*() {
          if (row.status === "live") return yield* new Conflict({ message: `${row.slug} is already live` })
          if (row.status === "paused") {
            return yield* new Conflict({ message: `${row.slug} is paused; resume it instead` })
          }
          yield* passGates(row)
          yield* repo.setStatus(row.id, "live", null)
        })).pipe(Effect.map(({ tool }) => tool))

    /** The orgs that bought from the tool in the last 30 days. */
    const recentUsers = (toolId: string) =>
      Effect.flatMap(currentDate, (at) => repo.usersSince(toolId, new Date(at.getTime() - RECENT_USE_MS)))

    const pause = (actor: AuditActor, ref: string, reason: string | undefined) =>
      Effect.gen(function*() {
        const why = reason?.trim() ?? ""
        if (why.length === 0) return yield* new ReasonRequired({ message: "Pausing a tool needs a written `reason`" })
        const { result, tool } = yield* act(actor, ref, "tool.pause", why, (row) =>
          Effect.gen(function*() {
            if (row.status === "paused") return yield* new Conflict({ message: `${row.slug} is already paused` })
            if (row.status !== "live") return yield* new Conflict({ message: `${row.slug} is not live` })
            yield* repo.setStatus(row.id, "paused", why)
            const orgs = yield* recentUsers(row.id)
            for (const orgId of orgs) {
              yield* events.emit(orgId, {
                type: "tool.paused",
                data: { tool_id: row.id, tool_name: row.name, reason: why }
              })
            }
            return orgs.length
          }))
        return { tool, notified_orgs: result }
      })

    const resume = (actor: AuditActor, ref: string) =>
      act(actor, ref, "tool.resume", null, (row) =>
        Effect.gen(function*() {
          if (row.status !== "paused") return yield* new Conflict({ message: `${row.slug} is not paused` })
          yield* passGates(row)
          yield* repo.setStatus(row.id, "live", null)
        })).pipe(Effect.map(({ tool }) => tool))

    const changePrice = (
      actor: AuditActor,
      ref: string,
      change: {
        readonly credits: number
        readonly valid_from?: string | undefined
        readonly reason?: string | undefined
      }
    ) =>
      Effect.gen(function*() {
        if (!Number.isSafeInteger(change.credits) || change.credits <= 0) {
          return yield* new InvalidAmount({ message: "price_per_success_credits must be a whole number above 0" })
        }
        const credits = BigInt(change.credits)
        const at = yield* currentDate
        const validFrom = change.valid_from === undefined ? at : new Date(change.valid_from)
        if (Number.isNaN(validFrom.getTime())) {
          return yield* new InvalidInput({ message: "valid_from must be an ISO 8601 timestamp" })
        }
        if (validFrom.getTime() < at.getTime()) {
          return yield* new InvalidInput({ message: `valid_from must not be earlier than now (${at.toISOString()})` })
        }
        const reason = change.reason?.trim() || null
        const { result, tool } = yield* act(actor, ref, "tool.price", reason, (row) =>
          Effect.gen(function*() {
            const old = priceAt(row, at)
            if (validFrom.getTime() === at.getTime()) yield* repo.setPrices(row.id, credits, null)
            else yield* repo.setPrices(row.id, old, { credits, from: validFrom })
            // An unpriced tool had no price to change from: nobody bought it.
            const orgs = old === null ? [] : yield* recentUsers(row.id)
            for (const orgId of orgs) {
              yield* events.emit(orgId, {
                type: "price.changed",
                data: {
                  tool_id: row.id,
                  tool_name: row.name,
                  old_credits: old!.toString(),
                  new_credits: credits.toString(),
                  valid_from: validFrom.toISOString()
                }
              })
            }
            return orgs.length
          }))
        return { tool, notified_orgs: result }
      })

    /** An administrator's adapter check on demand, audited. */
    const recheckAdapter = (actor: AuditActor, ref: string) =>
      act(actor, ref, "tool.check_adapter", null, checkAdapter).pipe(
        Effect.map(({ result, tool }) => ({ tool, adapter: result }))
      )

    /** Checks every live tool's adapter (AdapterChecks.ts runs it on a schedule). */
    const sweep = Effect.gen(function*() {
      for (const row of yield* repo.all) {
        if (row.status === "live") yield* checkAdapter(row)
      }
    })

    return { list: repo.all, create, update, publish, pause, resume, changePrice, recheckAdapter, sweep } as const
  })
}) {}
