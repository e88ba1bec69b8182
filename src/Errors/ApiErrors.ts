import { Schema } from "effect"
import { ApprovalSummary } from "../Domain/ApprovalSummary.js"
import { errorCatalogue, type ErrorCode } from "./ErrorCatalogue.js"

/**
 * One `Schema.TaggedError` per error code. The tag is the code itself, so
 * `Effect.catchTag("insufficient_credits", ...)` reads like the specification. The
 * message defaults to the catalogue's meaning; callers pass a sharper one when they can.
 */
const messageField = (code: ErrorCode) =>
  Schema.optionalWith(Schema.String, { default: () => errorCatalogue[code].meaning })

export const ApiError = <const C extends ErrorCode>(code: C) => <Self = never>() =>
  Schema.TaggedError<Self>()(code, { message: messageField(code) })

/** An error whose answer carries more than the error object (placed beside `error`). */
export const ApiErrorWith = <const C extends ErrorCode, const Fields extends Schema.Struct.Fields>(
  code: C,
  fields: Fields
) =>
<Self = never>() => Schema.TaggedError<Self>()(code, { message: messageField(code), ...fields })

export class ServiceUnavailable extends ApiError("service_unavailable")<ServiceUnavailable>() {}
export class InvalidInput extends ApiError("invalid_input")<InvalidInput>() {}
export class Unauthenticated extends ApiError("unauthenticated")<Unauthenticated>() {}
export class Forbidden extends ApiError("forbidden")<Forbidden>() {}
export class NotFound extends ApiError("not_found")<NotFound>() {}
export class RateLimited extends ApiError("rate_limited")<RateLimited>() {}
export class InvalidToken extends ApiError("invalid_token")<InvalidToken>() {}
export class InvalidCode extends ApiError("invalid_code")<InvalidCode>() {}
export class PhoneInUse extends ApiError("phone_in_use")<PhoneInUse>() {}
export class EmailUnverified extends ApiError("email_unverified")<EmailUnverified>() {}
export class PhoneUnverified extends ApiError("phone_unverified")<PhoneUnverified>() {}
export class IpNotAllowed extends ApiError("ip_not_allowed")<IpNotAllowed>() {}
export class UnknownTool extends ApiError("unknown_tool")<UnknownTool>() {}
export class UnknownTaskType extends ApiError("unknown_task_type")<UnknownTaskType>() {}
export class LiveExecuteUnavailable extends ApiError("live_execute_unavailable")<LiveExecuteUnavailable>() {}
export class CreditsFrozen extends ApiError("credits_frozen")<CreditsFrozen>() {}
export class InsufficientCredits extends ApiError("insufficient_credits")<InsufficientCredits>() {}
export class OverBudget extends ApiError("over_budget")<OverBudget>() {}
export class ApprovalExpired extends ApiError("approval_expired")<ApprovalExpired>() {}
export class ApprovalRejected extends ApiError("approval_rejected")<ApprovalRejected>() {}
export class TrialLimit extends ApiError("trial_limit")<TrialLimit>() {}
export class ApprovalMismatch extends ApiError("approval_mismatch")<ApprovalMismatch>() {}
export class PlanLimit extends ApiError("plan_limit")<PlanLimit>() {}
/**
 * The daily recommend quota is used up: `plan_limit`, but answered 429 (the catalogue says
 * 402) as the specification says for daily quotas. A class that carries `httpStatus` (and
 * `httpDescription`) is answered with them: see `wire` in Errors/Wire.ts.
 */
export class DailyQuotaExceeded extends Schema.TaggedError<DailyQuotaExceeded>()("plan_limit", {
  message: messageField("plan_limit")
}) {
  static readonly httpStatus = 429
  static readonly httpDescription = "Daily recommend quota used up; resets 00:00 UTC."
}
export class NotPurchasable extends ApiError("not_purchasable")<NotPurchasable>() {}
export class PriceAboveMax extends ApiError("price_above_max")<PriceAboveMax>() {}
export class ToolPaused extends ApiError("tool_paused")<ToolPaused>() {}
export class ProviderError extends ApiError("provider_error")<ProviderError>() {}
/** 200: no result passed its check; nothing charged; `reason` says why (per item in `items`). Purchases always set every field. */
export class CheckFailed extends ApiErrorWith("check_failed", {
  reason: Schema.optional(Schema.String),
  receipt_id: Schema.optional(Schema.String),
  check: Schema.optional(Schema.Struct({ id: Schema.String, version: Schema.String })),
  items: Schema.optional(Schema.Array(Schema.Struct({ index: Schema.Int, reason: Schema.String })))
})<CheckFailed>() {}
export class RequestInProgress extends ApiError("request_in_progress")<RequestInProgress>() {}
export class ProviderQuota extends ApiError("provider_quota")<ProviderQuota>() {}
export class AupLimit extends ApiError("aup_limit")<AupLimit>() {}
export class IdempotencyConflict extends ApiError("idempotency_conflict")<IdempotencyConflict>() {}
export class ReasonRequired extends ApiError("reason_required")<ReasonRequired>() {}
export class Conflict extends ApiError("conflict")<Conflict>() {}
export class UnverifiedEmail extends ApiError("unverified_email")<UnverifiedEmail>() {}
export class InvalidState extends ApiError("invalid_state")<InvalidState>() {}
export class IdpFailed extends ApiError("idp_failed")<IdpFailed>() {}
export class NotConfigured extends ApiError("not_configured")<NotConfigured>() {}
export class InvalidAmount extends ApiError("invalid_amount")<InvalidAmount>() {}
export class CaptureExceedsHold extends ApiError("capture_exceeds_hold")<CaptureExceedsHold>() {}
export class NotAHold extends ApiError("not_a_hold")<NotAHold>() {}
export class AlreadySettled extends ApiError("already_settled")<AlreadySettled>() {}
export class InvalidCredentials extends ApiError("invalid_credentials")<InvalidCredentials>() {}
export class Locked extends ApiError("locked")<Locked>() {}
export class WeakPassword extends ApiError("weak_password")<WeakPassword>() {}
export class ResaleRightsMissing extends ApiError("resale_rights_missing")<ResaleRightsMissing>() {}
export class PriceMissing extends ApiError("price_missing")<PriceMissing>() {}
export class ToolUnavailable extends ApiError("tool_unavailable")<ToolUnavailable>() {}
export class AdapterNotReady extends ApiError("adapter_not_ready")<AdapterNotReady>() {}
export class BenchmarkMissing extends ApiError("benchmark_missing")<BenchmarkMissing>() {}
export class BelowAccuracyFloor extends ApiError("below_accuracy_floor")<BelowAccuracyFloor>() {}
export class NotDisputable extends ApiError("not_disputable")<NotDisputable>() {}
export class DisputeWindowClosed extends ApiError("dispute_window_closed")<DisputeWindowClosed>() {}
export class TopupCap extends ApiError("topup_cap")<TopupCap>() {}
export class ConfirmationRequired extends ApiError("confirmation_required")<ConfirmationRequired>() {}
export class OfferUnavailable extends ApiError("offer_unavailable")<OfferUnavailable>() {}
export class NoSavedCard extends ApiError("no_saved_card")<NoSavedCard>() {}
export class PaymentUnavailable extends ApiError("payment_unavailable")<PaymentUnavailable>() {}
export class InvalidSignature extends ApiError("invalid_signature")<InvalidSignature>() {}
export class MethodNotAllowed extends ApiError("method_not_allowed")<MethodNotAllowed>() {}
export class FxUnavailable extends ApiError("fx_unavailable")<FxUnavailable>() {}
export class LastOwner extends ApiError("last_owner")<LastOwner>() {}
export class PayloadTooLarge extends ApiError("payload_too_large")<PayloadTooLarge>() {}
export class InternalError extends ApiError("internal_error")<InternalError>() {}
export class UnknownEndpoint extends ApiError("unknown_endpoint")<UnknownEndpoint>() {}
export class EndpointOnRequest extends ApiError("endpoint_on_request")<EndpointOnRequest>() {}
export class EndpointUnavailable extends ApiError("endpoint_unavailable")<EndpointUnavailable>() {}
export class PaymentRequired extends ApiError("payment_required")<PaymentRequired>() {}
export class PaymentInvalid extends ApiError("payment_invalid")<PaymentInvalid>() {}
export class PaymentReplayed extends ApiError("payment_replayed")<PaymentReplayed>() {}
export class PayerSpendCap extends ApiError("payer_spend_cap")<PayerSpendCap>() {}
/** 202: the purchase waits for an owner; the answer names the approval to retry with. */
export class ApprovalRequired extends ApiErrorWith("approval_required", { approval: ApprovalSummary })<
  ApprovalRequired
>() {}

/** Every code's class; the mapped type makes a missing or misnamed entry a compile error. */
export const apiErrorClasses = {
  invalid_input: InvalidInput,
  unauthenticated: Unauthenticated,
  forbidden: Forbidden,
  not_found: NotFound,
  rate_limited: RateLimited,
  invalid_token: InvalidToken,
  invalid_code: InvalidCode,
  phone_in_use: PhoneInUse,
  email_unverified: EmailUnverified,
  phone_unverified: PhoneUnverified,
  ip_not_allowed: IpNotAllowed,
  unknown_tool: UnknownTool,
  unknown_task_type: UnknownTaskType,
  live_execute_unavailable: LiveExecuteUnavailable,
  credits_frozen: CreditsFrozen,
  insufficient_credits: InsufficientCredits,
  over_budget: OverBudget,
  approval_required: ApprovalRequired,
  approval_expired: ApprovalExpired,
  approval_rejected: ApprovalRejected,
  trial_limit: TrialLimit,
  approval_mismatch: ApprovalMismatch,
  plan_limit: PlanLimit,
  not_purchasable: NotPurchasable,
  price_above_max: PriceAboveMax,
  tool_paused: ToolPaused,
  provider_error: ProviderError,
  check_failed: CheckFailed,
  request_in_progress: RequestInProgress,
  provider_quota: ProviderQuota,
  aup_limit: AupLimit,
  idempotency_conflict: IdempotencyConflict,
  reason_required: ReasonRequired,
  conflict: Conflict,
  unverified_email: UnverifiedEmail,
  invalid_state: InvalidState,
  idp_failed: IdpFailed,
  not_configured: NotConfigured,
  invalid_amount: InvalidAmount,
  capture_exceeds_hold: CaptureExceedsHold,
  not_a_hold: NotAHold,
  already_settled: AlreadySettled,
  invalid_credentials: InvalidCredentials,
  locked: Locked,
  weak_password: WeakPassword,
  resale_rights_missing: ResaleRightsMissing,
  price_missing: PriceMissing,
  tool_unavailable: ToolUnavailable,
  adapter_not_ready: AdapterNotReady,
  benchmark_missing: BenchmarkMissing,
  below_accuracy_floor: BelowAccuracyFloor,
  not_disputable: NotDisputable,
  dispute_window_closed: DisputeWindowClosed,
  topup_cap: TopupCap,
  confirmation_required: ConfirmationRequired,
  offer_unavailable: OfferUnavailable,
  no_saved_card: NoSavedCard,
  payment_unavailable: PaymentUnavailable,
  invalid_signature: InvalidSignature,
  method_not_allowed: MethodNotAllowed,
  fx_unavailable: FxUnavailable,
  last_owner: LastOwner,
  payload_too_large: PayloadTooLarge,
  internal_error: InternalError,
  unknown_endpoint: UnknownEndpoint,
  endpoint_on_request: EndpointOnRequest,
  endpoint_unavailable: EndpointUnavailable,
  service_unavailable: ServiceUnavailable,
  payment_required: PaymentRequired,
  payment_invalid: PaymentInvalid,
  payment_replayed: PaymentReplayed,
  payer_spend_cap: PayerSpendCap
} as const satisfies { readonly [C in ErrorCode]: { readonly _tag: C } }

export type ApiErrorClass = (typeof apiErrorClasses)[ErrorCode]
export type AnyApiError = InstanceType<ApiErrorClass>
