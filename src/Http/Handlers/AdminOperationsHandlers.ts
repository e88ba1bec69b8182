import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentAdmin } from "../../Domain/Current.js"
import { OrgId } from "../../Domain/Ids.js"
import { currentDate } from "../../Domain/Timestamps.js"
import { BenchmarkRuns } from "../../Services/Benchmarks/BenchmarkRuns.js"
import { ProviderSigning } from "../../Services/BotAuth/ProviderSigning.js"
import { EndpointOpenings } from "../../Services/Gateway/EndpointOpenings.js"
import { GatewaySettings } from "../../Services/Gateway/GatewaySettings.js"
import type { AuditActor } from "../../Services/Operations/AuditLog.js"
import { AuditLog } from "../../Services/Operations/AuditLog.js"
import { CreditAdjustments } from "../../Services/Operations/CreditAdjustments.js"
import { DataDeletion } from "../../Services/Operations/DataDeletion.js"
import { OrgPlans } from "../../Services/Operations/OrgPlans.js"
import { adminToolRecord } from "../../Services/Tools/AdminToolRecord.js"
import { ToolAdmin } from "../../Services/Tools/ToolAdmin.js"
import { Api } from "../Api.js"

/** The signed-in administrator as the audit log names them. */
const actor = Effect.map(CurrentAdmin, (admin): AuditActor => ({ admin_id: admin.admin_id, email: admin.email }))

/** A path org id (decoded by its path schema) in one spelling, as the audit log names its target. */
const orgIdOf = (value: OrgId) => OrgId.make(value.toLowerCase())

export const AdminToolsHandlers = HttpApiBuilder.group(Api, "adminTools", (handlers) =>
  Effect.gen(function*() {
    const tools = yield* ToolAdmin
    const benchmarks = yield* BenchmarkRuns
    const view = (row: Parameters<typeof adminToolRecord>[0]) =>
      Effect.map(currentDate, (at) => adminToolRecord(row, at))
    return handlers
      .handle("list", () =>
        Effect.gen(function*() {
          const at = yield* currentDate
          return { tools: (yield* tools.list).map((row) => adminToolRecord(row, at)) }
        }))
      .handle("create", ({ payload }) =>
        Effect.gen(function*() {
          const { check, ...fields } = payload
          const row = yield* tools.create(yield* actor, {
            ...fields,
            check_id: check.id,
            check_version: check.version,
            check_verifies: check.verifies
          })
          return { tool: yield* view(row) }
        }))
      .handle("update", ({ path, payload }) =>
        Effect.gen(function*() {
          const { check, ...fields } = payload
          const row = yield* tools.update(yield* actor, path.tool, {
            ...fields,
            ...(check === undefined
              ? {}
              : { check_id: check.id, check_version: check.version, check_verifies: check.verifies })
          })
          return { tool: yield* view(row) }
        }))
      .handle("publish", ({ path }) =>
        Effect.flatMap(actor, (admin) => tools.publish(admin, path.tool)).pipe(
          Effect.flatMap(view),
          Effect.map((tool) => ({ tool }))
        ))
      .handle("pause", ({ path, payload }) =>
        Effect.gen(function*() {
          const paused = yield* tools.pause(yield* actor, path.tool, payload.reason)
          return { tool: yield* view(paused.tool), notified_orgs: paused.notified_orgs }
        }))
      .handle("resume", ({ path }) =>
        Effect.flatMap(actor, (admin) => tools.resume(admin, path.tool)).pipe(
          Effect.flatMap(view),
          Effect.map((tool) => ({ tool }))
        ))
      .handle("price", ({ path, payload }) =>
        Effect.gen(function*() {
          const changed = yield* tools.changePrice(yield* actor, path.tool, {
            credits: payload.price_per_success_credits,
            valid_from: payload.valid_from,
            reason: payload.reason
          })
          return { tool: yield* view(changed.tool), notified_orgs: changed.notified_orgs }
        }))
      .handle("benchmark", ({ path, payload }) =>
        Effect.gen(function*() {
          return { run: yield* benchmarks.start(yield* actor, path.tool, payload.sample_set) }
        }))
      .handle("benchmarks", ({ path }) => Effect.map(benchmarks.forTool(path.tool), (runs) => ({ runs })))
      .handle("benchmarkRun", ({ path }) => Effect.map(benchmarks.get(path.id), (run) => ({ run })))
      .handle("sampleSets", () => Effect.succeed({ sample_sets: benchmarks.sampleSets }))
      .handle("checkAdapter", ({ path }) =>
        Effect.gen(function*() {
          const checked = yield* tools.recheckAdapter(yield* actor, path.tool)
          return { tool: yield* view(checked.tool), adapter: checked.adapter }
        }))
  }))

export const AdminOrgsHandlers = HttpApiBuilder.group(Api, "adminOrgs", (handlers) =>
  Effect.gen(function*() {
    const credits = yield* CreditAdjustments
    const plans = yield* OrgPlans
    const openings = yield* EndpointOpenings
    const deletion = yield* DataDeletion
    return handlers
      .handle("adjust", ({ path, payload }) =>
        Effect.gen(function*() {
          const orgId = orgIdOf(path.orgId)
          const adjusted = yield* credits.adjust(yield* actor, orgId, payload)
          return { org_id: orgId, credits: adjusted.credits.toString(), balance: adjusted.balance.toString() }
        }))
      .handle("freeze", ({ path, payload }) =>
        Effect.gen(function*() {
          const orgId = orgIdOf(path.orgId)
          yield* credits.freeze(yield* actor, orgId, payload.reason)
          return { org_id: orgId, credits_frozen: true as const }
        }))
      .handle("plan", ({ path, payload }) =>
        Effect.gen(function*() {
          const orgId = orgIdOf(path.orgId)
          return yield* plans.setPlan(yield* actor, orgId, payload.plan, payload.reason)
        }))
      .handle("openEndpoint", ({ path, payload }) =>
        Effect.gen(function*() {
          const orgId = orgIdOf(path.orgId)
          return yield* openings.open(yield* actor, orgId, payload.endpoint, payload.reason)
        }))
      .handle("closeEndpoint", ({ path, payload }) =>
        Effect.gen(function*() {
          const orgId = orgIdOf(path.orgId)
          return yield* openings.close(yield* actor, orgId, path.endpoint, payload.reason)
        }))
      .handle("deletionRequests", ({ urlParams }) =>
        Effect.map(deletion.queue(urlParams.status), (deletion_requests) => ({ deletion_requests })))
      .handle("carryOutDeletion", ({ path }) =>
        Effect.gen(function*() {
          return { deletion_request: yield* deletion.carryOut(yield* actor, path.id) }
        }))
  }))

export const AdminGatewayHandlers = HttpApiBuilder.group(Api, "adminGateway", (handlers) =>
  Effect.gen(function*() {
    const settings = yield* GatewaySettings
    const signing = yield* ProviderSigning
    const openings = yield* EndpointOpenings
    return handlers
      .handle("switch", ({ payload }) =>
        Effect.flatMap(actor, (admin) =>
          settings.setGatewayEnabled(admin, payload.enabled, payload.reason)))
      .handle("providerCap", ({ path, payload }) =>
        Effect.flatMap(
          actor,
          (admin) =>
            settings.setProviderCap(admin, path.provider, payload.daily_call_cap, payload.reason)
        ))
      .handle("providerSigning", ({ path, payload }) =>
        Effect.flatMap(actor, (admin) =>
          signing.setSigning(admin, path.provider, payload.signs_requests, payload.reason)))
      .handle("openingRequests", ({ urlParams }) =>
        Effect.map(openings.queue(urlParams.status), (requests) => ({ requests })))
      .handle("declineOpening", ({ path, payload }) =>
        Effect.gen(function*() {
          return { request: yield* openings.decline(yield* actor, path.id, payload.reason) }
        }))
  }))

export const AdminAuditHandlers = HttpApiBuilder.group(Api, "adminAudit", (handlers) =>
  Effect.gen(function*() {
    const audit = yield* AuditLog
    return handlers.handle("list", ({ urlParams }) => audit.list(urlParams))
  }))
