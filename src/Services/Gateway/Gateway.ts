import { SqlClient } from "@effect/sql"
import { Cache, Clock, Duration, Effect, Fiber, FiberSet, Option } from "effect"
import { randomUUID } from "node:crypto"
import { type EndpointWithProvider, placeholdersOf } from "../../Domain/Catalogue.js"
import type { AuthenticatedAgent } from "../../Domain/Current.js"
import type { CallRequest, CallResult, RefundReason } from "../../Domain/GatewayCall.js"
import { CallId } from "../../Domain/Ids.js"
import { amountOf } from "../../Domain/Money.js"
import { gatewayPrice } from "../../Domain/Plans.js"
import {
  EndpointOnRequest,
  EndpointUnavailable,
  InvalidInput,
  PriceAboveMax,
  UnknownEndpoint
} from "../../Errors/ApiErrors.js"
import { Credentials } from "../Auth/Credentials.js"
import { StaleCredential } from "../Auth/CredentialsRepo.js"
import { CatalogueRepo } from "../Catalogue/CatalogueRepo.js"
import { Ledger } from "../Ledger/Ledger.js"
import { dayOf } from "../Ledger/Time.js"
import { withSpanWhenTracing } from "../Observability/Spans.js"
import { Providers } from "../Providers/Providers.js"
import type { CallParams, ProviderOutcome } from "../Providers/ProviderTypes.js"
import { sandboxSample } from "../Providers/Sandbox.js"
import { companyDomainOf, Quotas } from "../Quotas/Quotas.js"
import { sha256OfJcs } from "../Receipts/Jcs.js"
import { Refusals } from "../Usage/Refusals.js"
import { CallBatches } from "./CallBatches.js"
import { EndpointOpenings } from "./EndpointOpenings.js"
import { GatewayRepo } from "./GatewayRepo.js"
import { GatewaySettings } from "./GatewaySettings.js"

/**
 * `POST /v1/call`: check, price, hold, forward, then capture what the answer costs or
 * release the hold when the provider fails, refuses or times out.
 *
 * Result `status` values:
 * - `succeeded` — the provider answered (2xx, an empty answer too) and the call is charged;
 * - `refused` — the provider refused it (4xx); nothing charged;
 * - `failed` — the provider failed (5xx, redirect, network error); nothing charged;
 * - `timed_out` — no answer within the timeout (60 s); nothing charged;
 * - `test` — a test key: checked and priced, not made; no credits move, the price counts
 *   toward the agent's monthly budget. `data` is the built-in sandbox's deterministic
 *   sample answer for the endpoint and parameters, and `sample: true` says so.
 * In the call list two more appear: `pending` (in flight) and `abandoned` (left behind by
 * a crash; the hold was released by the sweeper).
 *
 * `refunded`, present when a hold was released in whole or in part:
 * `{credits, usd, reason}` with reason `provider_refused`, `provider_error`, `timeout`,
 * `lower_cost_reported` (the provider reported a lower cost; the difference was released)
 * or `hold_expired` (the answer came after the hold's time and the sweeper released it).
 */

export class Gateway extends Effect.Service<Gateway>()("Gateway/Gateway", {
  dependencies: [
    GatewayRepo.Default,
    CatalogueRepo.Default,
    Providers.Default,
    Quotas.Default,
    GatewaySettings.Default,
    EndpointOpenings.Default,
    Credentials.Default,
    Refusals.Default,
    CallBatches.Default
  ],
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* GatewayRepo
    const catalogue = yield* CatalogueRepo
    const providers = yield* Providers
    const quotas = yield* Quotas
    const ledger = yield* Ledger
    const settings = yield* GatewaySettings
    const openings = yield* EndpointOpenings
    const credentials = yield* Credentials
    const refusals = yield* Refusals
    // Made before the calls' fibers, so it outlives them: an interrupted call still settles.
    const batches = yield* CallBatches
    const inFlight = yield* FiberSet.make<unknown, never>()

    // Endpoint records change rarely (a price or availability edit); a short cache spares
    // a query per call and lets such an edit take effect within seconds.
    const endpoints = yield* Cache.make({
      capacity: 5_000,
      timeToLive: Duration.seconds(5),
      lookup: (id: string) => catalogue.endpoint(id)
    })

    /**
     * Validates the request and prices it for a buyer (an org's agent, or a keyless payer
     * with no org: the pay-as-you-go price, live endpoints only); nothing is held yet.
     */
    const prepare = (agent: Pick<AuthenticatedAgent, "org_id" | "org_plan"> | null, input: CallRequest) =>
      Effect.gen(function*() {
        if (!(yield* settings.gatewayEnabled)) {
          return yield* new EndpointUnavailable({ message: "The gateway is switched off for now; retry later" })
        }
        // The shape (objects, a non-negative max_price, an endpoint id) is decoded by each
        // entry point with the CallRequest schema.
        const { body, query } = input
        const pathParams = input.path_params ?? {}
        const found = yield* endpoints.get(input.endpoint)
        if (Option.isNone(found)) {
          return yield* new UnknownEndpoint({ message: `No endpoint ${input.endpoint}; see GET /v1/endpoints` })
        }
        const endpoint = found.value
        if (
          endpoint.availability !== "live" && (agent === null || !(yield* openings.isOpen(agent.org_id, endpoint.id)))
        ) {
          return yield* new EndpointOnRequest({
            message: `${endpoint.id} is opened per customer; ask us to open it for your org`
          })
        }
        for (const name of placeholdersOf(endpoint.path)) {
          const value = pathParams[name]
          if (value === undefined || value === null || (typeof value === "string" && value.length === 0)) {
            return yield* new InvalidInput({ message: `\`path_params.${name}\` is required by ${endpoint.path}` })
          }
          if (typeof value !== "string" && typeof value !== "number") {
            return yield* new InvalidInput({ message: `\`path_params.${name}\` must be a string or a number` })
          }
        }
        const price = gatewayPrice(endpoint.base_price_credits, agent?.org_plan ?? "payg")
        if (input.max_price !== undefined && Number(price) > input.max_price) {
          return yield* new PriceAboveMax({
            message: `${endpoint.id} costs ${price} credits per call, above max_price ${input.max_price}`
          })
        }
        const params: CallParams = { query, body, pathParams }
        const lookupField = endpoint.people_lookup_field
        const peopleDomain = lookupField === null
          ? null
          : companyDomainOf(pathParams[lookupField] ?? query?.[lookupField] ?? body?.[lookupField])
        // What the caller sent, as its signed call record names it (Receipts/Jcs.ts).
        const requestSha256 = sha256OfJcs({
          endpoint: endpoint.id,
          path_params: pathParams,
          query: query ?? {},
          body: body ?? {}
        })
        return { endpoint, params, price, peopleDomain, requestSha256 }
      })

    const resultOf = (
      callId: string,
      endpoint: EndpointWithProvider,
      price: bigint,
      status: CallResult["status"],
      charged: bigint,
      latencyMs: number,
      providerStatus: number | null,
      data: unknown,
      refund: { credits: bigint; reason: RefundReason } | null
    ): CallResult => ({
      call_id: callId,
      endpoint: endpoint.id,
      provider: endpoint.provider.id,
      status,
      price: amountOf(price),
      charged: amountOf(charged),
      latency_ms: latencyMs,
      provider_status: providerStatus,
      data,
      ...(refund === null ? {} : { refunded: { ...amountOf(refund.credits), reason: refund.reason } })
    })

    /** What an outcome charges and how it is reported. */
    const assess = (outcome: ProviderOutcome, price: bigint) => {
      switch (outcome._tag) {
        case "answered": {
          const reported = outcome.reportedCost
          const charge = reported !== null && reported < price ? reported : price
          return {
            status: "succeeded" as const,
            charge,
            reason: charge < price ? "lower_cost_reported" as const : null,
            providerStatus: outcome.status,
            data: outcome.data
          }
        }
        case "refused":
          return {
            status: "refused" as const,
            charge: 0n,
            reason: "provider_refused" as const,
            providerStatus: outcome.status,
            data: outcome.data
          }
        case "failed":
          return {
            status: "failed" as const,
            charge: 0n,
            reason: "provider_error" as const,
            providerStatus: outcome.status,
            data: outcome.data
          }
        case "timed_out":
          return {
            status: "timed_out" as const,
            charge: 0n,
            reason: "timeout" as const,
            providerStatus: null,
            data: null
          }
      }
    }

    /** A made call's result, as its outcome was assessed. */
    const resultOfAssessed = (
      callId: string,
      endpoint: EndpointWithProvider,
      price: bigint,
      assessed: ReturnType<typeof assess>,
      charged: bigint,
      latencyMs: number,
      refund: { credits: bigint; reason: RefundReason } | null
    ) =>
      resultOf(
        callId,
        endpoint,
        price,
        assessed.status,
        charged,
        latencyMs,
        assessed.providerStatus,
        assessed.data,
        refund
      )

    const testCall = (agent: AuthenticatedAgent, prepared: Effect.Effect.Success<ReturnType<typeof prepare>>) =>
      Effect.gen(function*() {
        const { endpoint, peopleDomain, price } = prepared
        const ms = yield* Clock.currentTimeMillis
        const callId = CallId.make(randomUUID())
        // Nothing is sent: the answer is the built-in sandbox's sample for these parameters.
        const sample = sandboxSample(endpoint, prepared.params)
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* quotas.check({
            orgId: agent.org_id,
            providerId: endpoint.provider.id,
            dailyCap: endpoint.provider.daily_call_cap,
            peopleDomain,
            day: dayOf(ms)
          })
          // A cached credential is checked again in the transaction of the call's writes.
          const [valid] = yield* credentials.stillValid([agent])
          if (valid === false) return yield* new StaleCredential()
          // A test call's hold counts toward the agent's budget only.
          const hold = yield* ledger.hold({
            orgId: agent.org_id,
            agentId: agent.id,
            amount: price,
            purpose: "gateway_call",
            reference: callId,
            testMode: true
          })
          yield* ledger.capture(hold.id, price)
          yield* repo.insertCalls([{
            id: callId,
            org_id: agent.org_id,
            agent_id: agent.id,
            endpoint_id: endpoint.id,
            provider_id: endpoint.provider.id,
            mode: "test",
            status: "test",
            price_credits: price,
            charged_credits: price,
            hold_id: hold.id,
            latency_ms: 0,
            created_at: new Date(ms),
            finished_at: new Date(ms),
            request_sha256: prepared.requestSha256,
            response_sha256: sha256OfJcs(sample)
          }])
        })).pipe(
          Effect.catchTags({
            SqlError: Effect.die,
            already_settled: Effect.die,
            capture_exceeds_hold: Effect.die,
            not_a_hold: Effect.die,
            invalid_amount: Effect.die
          })
        )
        return { ...resultOf(callId, endpoint, price, "test", price, 0, null, sample, null), sample: true as const }
      })

    const liveCall = (agent: AuthenticatedAgent, prepared: Effect.Effect.Success<ReturnType<typeof prepare>>) =>
      Effect.gen(function*() {
        const { endpoint, params, peopleDomain, price } = prepared
        const startedMs = yield* Clock.currentTimeMillis
        const callId = CallId.make(randomUUID())
        const quota = {
          orgId: agent.org_id,
          providerId: endpoint.provider.id,
          dailyCap: endpoint.provider.daily_call_cap,
          peopleDomain,
          day: dayOf(startedMs)
        }
        // In the next batch of holds (CallBatches.ts): the credential checked again when it
        // came from the cache, the call counted against the provider's cap and the people-lookup
        // limit, budget and balance taken, and the pending call row written, or none of it.
        const hold = yield* batches.hold({
          agent,
          quota,
          price,
          call: {
            id: callId,
            org_id: agent.org_id,
            agent_id: agent.id,
            endpoint_id: endpoint.id,
            provider_id: endpoint.provider.id,
            mode: "live",
            status: "pending",
            price_credits: price,
            charged_credits: 0n,
            hold_id: null,
            latency_ms: null,
            created_at: new Date(startedMs),
            finished_at: null,
            request_sha256: prepared.requestSha256,
            response_sha256: null
          }
        })

        // No transaction is open while the provider works. The call and its settlement run
        // in a fiber of the service, so a caller that goes away cannot strand the hold.
        const settle = (outcome: ProviderOutcome, latencyMs: number) =>
          Effect.gen(function*() {
            const assessed = assess(outcome, price)
            const finishedAt = new Date(yield* Clock.currentTimeMillis)
            // In the next batch of settlements (CallBatches.ts): the hold captured or released,
            // with the events it causes, and the call row completed, in one transaction.
            const charge = assessed.charge
            const finishing = (charged: bigint, reason: RefundReason | null) => ({
              id: callId,
              holdId: hold.id,
              status: assessed.status,
              chargedCredits: charged,
              refundedCredits: price - charged,
              refundReason: charged < price ? reason : null,
              providerStatus: assessed.providerStatus,
              latencyMs,
              finishedAt,
              responseSha256: sha256OfJcs(assessed.data)
            })
            const result = (charged: bigint, refund: { credits: bigint; reason: RefundReason } | null) =>
              resultOfAssessed(callId, endpoint, price, assessed, charged, latencyMs, refund)
            return yield* batches.settle({
              callId,
              holdId: hold.id,
              captured: charge,
              finish: finishing(charge, assessed.reason)
            }).pipe(
              Effect.map((settlement) =>
                result(
                  settlement.captured,
                  settlement.released > 0n
                    ? { credits: settlement.released, reason: assessed.reason ?? "provider_error" }
                    : null
                )
              ),
              // The sweeper released the hold first (the answer came after the hold's time).
              Effect.catchTag("already_settled", () =>
                Effect.as(
                  repo.finishCalls([finishing(0n, "hold_expired")]),
                  result(0n, { credits: price, reason: "hold_expired" })
                )),
              Effect.catchTags({
                capture_exceeds_hold: Effect.die,
                not_a_hold: Effect.die,
                invalid_amount: Effect.die
              })
            )
          })

        const work = Effect.gen(function*() {
          const sentMs = yield* Clock.currentTimeMillis
          const outcome = yield* providers.send(endpoint, params).pipe(
            withSpanWhenTracing("gateway.provider_call", {
              captureStackTrace: false,
              kind: "client",
              attributes: { "gateway.endpoint": endpoint.id }
            })
          )
          const latencyMs = Math.max(0, (yield* Clock.currentTimeMillis) - sentMs)
          return yield* settle(outcome, latencyMs)
        }).pipe(
          // Interrupted (the server stops) during the provider call: nothing is charged.
          Effect.onInterrupt(() =>
            Effect.uninterruptible(settle({ _tag: "failed", status: null, data: null, reason: "interrupted" }, 0)).pipe(
              Effect.catchAllCause((cause) => Effect.logWarning("Could not release an interrupted call's hold", cause))
            )
          )
        )
        const fiber = yield* FiberSet.run(inFlight, work)
        return yield* Fiber.join(fiber)
      })

    /**
     * A keyless payer's call (x402, Services/X402): priced as `quote` says, made as a live
     * call is (same forwarder, same deadline, in a fiber of the service), but nothing is held
     * or written here: the payer has no org, so the payment's own records keep it. Only a
     * `succeeded` call is paid for, and at its price (the payment's amount is fixed).
     */
    const quote = (input: CallRequest) => prepare(null, input)

    const forwardPaid = (prepared: Effect.Effect.Success<ReturnType<typeof prepare>>, callId: string) =>
      Effect.gen(function*() {
        const { endpoint, params, price } = prepared
        const sentMs = yield* Clock.currentTimeMillis
        const outcome = yield* providers.send(endpoint, params)
        const finishedMs = yield* Clock.currentTimeMillis
        const latencyMs = Math.max(0, finishedMs - sentMs)
        const assessed = assess(outcome, price)
        const charged = assessed.status === "succeeded" ? price : 0n
        const result = resultOfAssessed(
          callId,
          endpoint,
          price,
          assessed,
          charged,
          latencyMs,
          charged === price ? null : { credits: price, reason: assessed.reason ?? "provider_error" }
        )
        return {
          result,
          requestSha256: prepared.requestSha256,
          responseSha256: sha256OfJcs(assessed.data),
          startedAt: new Date(sentMs),
          finishedAt: new Date(finishedMs)
        }
      })

    const callForPayer = (prepared: Effect.Effect.Success<ReturnType<typeof prepare>>, callId: string) =>
      Effect.flatMap(FiberSet.run(inFlight, forwardPaid(prepared, callId)), Fiber.join)

    const attempt = (agent: AuthenticatedAgent, input: CallRequest) =>
      Effect.flatMap(
        prepare(agent, input),
        (prepared) => agent.mode === "test" ? testCall(agent, prepared) : liveCall(agent, prepared)
      ).pipe(
        // Prices are at least 1 credit, so a hold's amount is always valid.
        Effect.catchTag("invalid_amount", Effect.die)
      )

    /**
     * Makes one gateway call for `agent`; a cached credential the hold found changed is
     * read again and the call made for what it is now (Credentials.readAgainWhenStale).
     */
    const call = (agent: AuthenticatedAgent, input: CallRequest) =>
      credentials.readAgainWhenStale(agent, (current) => attempt(current, input)).pipe(
        Effect.tapError(refusals.record(agent))
      )

    return { call, quote, callForPayer } as const
  })
}) {}
