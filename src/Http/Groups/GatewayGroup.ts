import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema, Struct } from "effect"
import { ProviderListing } from "../../Domain/Catalogue.js"
import { CallRequest, CallResult, GatewayCall, Refunded } from "../../Domain/GatewayCall.js"
import { AgentId, CallId } from "../../Domain/Ids.js"
import { Amount } from "../../Domain/Money.js"
import { RecordSignature } from "../../Domain/RecordSignature.js"
import {
  AupLimit,
  CreditsFrozen,
  EndpointOnRequest,
  EndpointUnavailable,
  InsufficientCredits,
  InvalidInput,
  OverBudget,
  PayerSpendCap,
  PaymentInvalid,
  PaymentReplayed,
  PaymentRequired,
  PriceAboveMax,
  ProviderQuota,
  TrialLimit,
  UnknownEndpoint
} from "../../Errors/ApiErrors.js"
import { wire } from "../../Errors/Wire.js"
import { AgentAuth, KeyCheckedAgain, OrgAuth } from "../Security/AuthTags.js"
import { PublicRateLimit } from "../Security/RateLimitTags.js"
import { pageLimitOrDefault } from "./Pagination.js"
import { OrgPath } from "./PathIds.js"

/** The gateway (`POST /v1/call`), the agent's balance, and the org's call list. */

export const Balance = Schema.Struct({
  agent_id: Schema.String,
  mode: Schema.Literal("test", "live"),
  month: Schema.String.annotations({ description: "Calendar month (UTC), YYYY-MM" }),
  month_to_date_spend: Amount,
  monthly_budget: Amount,
  budget_remaining: Amount,
  org_credits: Amount,
  credits_frozen: Schema.Boolean,
  trial: Schema.NullOr(Schema.Struct({
    credits: Amount,
    expires_at: Schema.String,
    expired: Schema.Boolean,
    funded: Schema.Boolean
  }))
}).annotations({ identifier: "Balance" })

/** The call row's wire columns shown before its refund. */
const leading = [
  "id",
  "agent_id",
  "endpoint_id",
  "provider_id",
  "mode",
  "status",
  "price_credits",
  "charged_credits"
] as const

/** A call of the call list: the call row's wire columns, its refund (two columns of the row), and its signature. */
export const CallRecord = Schema.Struct({
  ...Struct.pick(GatewayCall.json.fields, ...leading),
  refunded: Schema.NullOr(Refunded),
  ...Struct.omit(GatewayCall.json.fields, ...leading),
  signature: RecordSignature
}).annotations({ identifier: "CallRecord" })

export class GatewayGroup extends HttpApiGroup.make("gateway")
  .add(
    HttpApiEndpoint.post("call", "/v1/call")
      .annotate(KeyCheckedAgain, ["live"])
      .annotateContext(
        OpenApi.annotations({
          summary: "Call a provider endpoint",
          description:
            "Calls one catalogue endpoint with the agent's credits: held before the call, settled after it, refunded when the provider fails. A test key checks and prices the call without making it and answers the endpoint's sandbox sample. With x402 on (X402_ENABLED), a request without a key may pay per request instead (the `exact` scheme: the call's price, settled only when the provider answered): without `PAYMENT-SIGNATURE` it answers 402 `payment_required` with `PAYMENT-REQUIRED`; with one, the answer carries `PAYMENT-RESPONSE` when something was settled and `record`, the signed record naming the payer (docs/x402-and-signatures.md)."
        })
      )
      .setPayload(CallRequest)
      .addSuccess(CallResult)
      .addError(wire(InvalidInput))
      .addError(wire(UnknownEndpoint))
      .addError(wire(EndpointOnRequest))
      .addError(wire(PriceAboveMax))
      .addError(wire(OverBudget))
      .addError(wire(InsufficientCredits))
      .addError(wire(CreditsFrozen))
      .addError(wire(TrialLimit))
      .addError(wire(ProviderQuota))
      .addError(wire(AupLimit))
      .addError(wire(EndpointUnavailable))
      .addError(wire(PaymentRequired))
      .addError(wire(PaymentInvalid))
      .addError(wire(PaymentReplayed))
      .addError(wire(PayerSpendCap))
  )
  .add(
    HttpApiEndpoint.get("balance", "/v1/balance")
      .annotateContext(
        OpenApi.annotations({
          summary: "Agent balance",
          description: "The org's balance and the agent's budget left this month."
        })
      ).addSuccess(Balance)
  )
  .middleware(AgentAuth)
  .annotateContext(OpenApi.annotations({
    title: "Gateway",
    description: "Call any live catalogue endpoint with the provider's own parameters; pay only for answers."
  }))
{}

export class GatewayCallsGroup extends HttpApiGroup.make("gatewayCalls")
  .add(
    HttpApiEndpoint.get("list", "/v1/orgs/:orgId/calls")
      .annotateContext(
        OpenApi.annotations({
          summary: "List gateway calls",
          description: "The org's gateway calls newest first, with endpoint, status, charge and latency."
        })
      )
      .setPath(OrgPath)
      .setUrlParams(Schema.Struct({
        limit: pageLimitOrDefault,
        starting_after: Schema.optional(
          CallId.annotations({ message: () => "not a call id" })
        ),
        agent_id: Schema.optional(
          AgentId.annotations({
            description: "Only this agent's calls",
            message: () => "not an agent id"
          })
        ),
        status: Schema.optional(CallRecord.fields.status.annotations({ description: "Only calls in this status" })),
        endpoint: Schema.optional(Schema.String.annotations({ description: "Only calls of this endpoint id" })),
        endpoint_contains: Schema.optional(
          Schema.String.pipe(Schema.maxLength(200)).annotations({
            description: "Only calls whose endpoint id contains this text (any case)"
          })
        ),
        from: Schema.optional(Schema.Date.annotations({ description: "Only calls made at or after this instant" })),
        until: Schema.optional(Schema.Date.annotations({ description: "Only calls made before this instant" }))
      }))
      .addSuccess(Schema.Struct({ calls: Schema.Array(CallRecord), has_more: Schema.Boolean }))
      .addError(wire(InvalidInput))
  )
  .middleware(OrgAuth)
  .annotateContext(OpenApi.annotations({
    title: "Gateway calls",
    description: "The org's gateway calls, newest first: endpoint, status, charge and latency (never contents)."
  }))
{}

/** Public: the gateway's providers with their published daily call caps. */
export class GatewayProvidersGroup extends HttpApiGroup.make("gatewayProviders")
  .add(
    HttpApiEndpoint.get("list", "/v1/providers")
      .annotateContext(
        OpenApi.annotations({
          summary: "List providers",
          description: "The gateway's providers with their endpoint counts and availability."
        })
      ).addSuccess(Schema.Struct({ providers: Schema.Array(ProviderListing) }))
  )
  .middleware(PublicRateLimit)
  .annotateContext(OpenApi.annotations({
    title: "Gateway providers",
    description:
      "Each provider of the catalogue with its daily call cap per org (reset 00:00 UTC). No credential needed."
  }))
{}
