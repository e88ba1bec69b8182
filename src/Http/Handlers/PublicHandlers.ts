import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Clock, DateTime, Effect } from "effect"
import { topUpCap, topUpLimits } from "../../Domain/Billing.js"
import { FORMULA_VERSION, formulaDocument } from "../../Domain/Formula.js"
import { amountOf } from "../../Domain/Money.js"
import { commonLimits, foundingOffer, plans, trialTerms } from "../../Domain/Plans.js"
import { taskTypes } from "../../Domain/TaskType.js"
import { AppConfig } from "../../Services/AppConfig.js"
import { Credentials } from "../../Services/Auth/Credentials.js"
import { PlanChanges } from "../../Services/Billing/PlanChanges.js"
import { Catalogue } from "../../Services/Catalogue/Catalogue.js"
import { RateLimiter } from "../../Services/RateLimiter/RateLimiter.js"
import { Tools } from "../../Services/Tools/Tools.js"
import { Waitlist } from "../../Services/Waitlist/Waitlist.js"
import { Api } from "../Api.js"
import { ClientAddress } from "../ClientAddress.js"
import { presentedCredential } from "../PresentedCredential.js"

const multiplier = (basisPoints: number) => (basisPoints / 10_000).toFixed(2)

export const PublicHandlers = HttpApiBuilder.group(Api, "public", (handlers) =>
  Effect.gen(function*() {
    const tools = yield* Tools
    const catalogue = yield* Catalogue
    const config = yield* AppConfig
    const sql = yield* SqlClient.SqlClient
    const credentials = yield* Credentials
    const addresses = yield* ClientAddress
    const planChanges = yield* PlanChanges
    const rateLimiter = yield* RateLimiter

    return handlers
      .handle("tools", () => Effect.map(tools.list, (list) => ({ tools: list })))
      .handle("scores", ({ urlParams }) =>
        Effect.map(tools.scored(urlParams.task_type), (scored) => ({
          formula_version: FORMULA_VERSION,
          scores: scored.map(({ parts, rank, score, tool }) => ({
            tool_id: tool.row.id,
            slug: tool.row.slug,
            name: tool.row.name,
            task_type: tool.row.task_type,
            rank,
            score,
            parts,
            purchasable: tool.purchasable
          }))
        })))
      .handle("taskTypes", () => Effect.succeed({ task_types: taskTypes }))
      .handle("pricing", () =>
        Effect.gen(function*() {
          const offer = yield* planChanges.offerStatus
          return {
            credit: { usd: "0.001", note: "Prices and balances are counted in credits; 1 credit = $0.001." },
            plans: Object.values(plans).map((plan) => ({
              id: plan.id,
              name: plan.name,
              monthly_fee_usd: plan.monthly_fee_usd,
              daily_score_lookups: plan.daily_score_lookups,
              daily_free_text_lookups: plan.daily_free_text_lookups,
              gateway_price_multiplier: multiplier(plan.gateway_price_basis_points),
              max_active_agents: plan.max_active_agents,
              max_seats: plan.max_seats
            })),
            gateway_price_rule:
              "price_per_call = ceil(base_price_credits x gateway_price_multiplier), at least 1 credit",
            trial: {
              credits: amountOf(trialTerms.credits),
              days: trialTerms.days,
              hourly_spend_limit: amountOf(trialTerms.hourly_spend_limit_credits),
              note:
                "Every new org gets trial credits that expire after the term; until the first top-up an org may spend at most the hourly limit."
            },
            founding_offer: {
              id: foundingOffer.id,
              name: foundingOffer.name,
              description: foundingOffer.description,
              plan: foundingOffer.plan,
              monthly_fee_usd: foundingOffer.monthly_fee_usd,
              total: foundingOffer.total_seats,
              taken: offer.taken,
              remaining: offer.remaining,
              ends_at: foundingOffer.ends_at,
              status: offer.status
            },
            top_up: {
              min: amountOf(topUpLimits.min_credits),
              max: amountOf(topUpLimits.max_credits),
              currencies: ["usd" as const, "inr" as const],
              new_account_cap: amountOf(topUpCap.credits),
              new_account_cap_days: topUpCap.days
            },
            limits: { ...commonLimits }
          }
        }))
      .handle("formula", () => Effect.succeed(formulaDocument))
      .handle("reports", () =>
        Effect.gen(function*() {
          const [records, benchmarks] = yield* Effect.all([tools.records, tools.benchmarks])
          const byId = new Map(records.map((record) => [record.row.id, record.row]))
          return {
            reports: benchmarks.flatMap(({ benchmark, measurement, tool_id }) => {
              const tool = byId.get(tool_id)
              return tool === undefined ? [] : [{
                tool_id,
                tool_slug: tool.slug,
                tool_name: tool.name,
                task_type: tool.task_type,
                ...benchmark,
                check_version: measurement.check_version ?? tool.check_version,
                measured_by_run: measurement.run_id,
                cost_credits: measurement.cost_credits === null ? null : measurement.cost_credits.toString()
              }]
            })
          }
        }))
      .handle("status", () =>
        Effect.gen(function*() {
          const started = yield* Clock.currentTimeMillis
          const database = yield* sql`SELECT 1 AS ok`.pipe(
            Effect.zipRight(Clock.currentTimeMillis),
            Effect.map((ended) => ({ status: "ok" as const, latency_ms: ended - started })),
            Effect.catchAll(() => Effect.succeed({ status: "unavailable" as const, latency_ms: null }))
          )
          const counts = database.status === "ok"
            ? yield* catalogue.counts.pipe(Effect.orElseSucceed(() => null))
            : null
          const toolRecords = database.status === "ok" ? yield* tools.records.pipe(Effect.orElseSucceed(() => [])) : []
          return {
            status: database.status === "ok" ? "ok" as const : "degraded" as const,
            version: config.version,
            time: DateTime.formatIso(DateTime.unsafeMake(started)),
            database,
            catalogue: {
              providers: Number(counts?.providers ?? 0),
              endpoints: Number(counts?.endpoints ?? 0),
              live: Number(counts?.live ?? 0),
              on_request: Number(counts?.on_request ?? 0),
              categories: Number(counts?.categories ?? 0)
            },
            tools: {
              count: toolRecords.length,
              purchasable: toolRecords.filter((record) => record.purchasable).length,
              task_types: new Set(toolRecords.map((record) => record.row.task_type)).size
            },
            rate_limits: { store: yield* rateLimiter.storeState }
          }
        }))
      .handle("endpoints", ({ urlParams }) =>
        Effect.gen(function*() {
          // Prices are per plan: an agent key's org plan, else the one asked for, else Pay as you go.
          const { header } = presentedCredential(yield* HttpServerRequest.HttpServerRequest)
          const plan = header?.kind === "agent_key"
            ? (yield* credentials.authenticateAgentKey(header.token, yield* addresses.current)).org_plan
            : urlParams.plan ?? "payg"
          return { endpoints: yield* catalogue.search(urlParams, plan) }
        }))
  }))

export const WaitlistHandlers = HttpApiBuilder.group(Api, "waitlist", (handlers) =>
  Effect.gen(function*() {
    const waitlist = yield* Waitlist
    return handlers.handle("join", ({ payload }) =>
      Effect.as(waitlist.join(payload.email), { status: "on_waitlist" as const }))
  }))
