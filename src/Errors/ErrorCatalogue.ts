/**
 * The error catalogue: every error code of the specification with its HTTP status,
 * whether a client may retry, and what it means. `ErrorCode` is the set of keys, so an
 * error class (see ApiErrors.ts) for a code without an entry here does not compile, and
 * the registry there must name a class for every entry.
 */
export interface ErrorEntry {
  readonly status: number
  readonly retryable: boolean
  readonly meaning: string
}

export const errorCatalogue = {
  invalid_input: { status: 400, retryable: false, meaning: "Body or field missing or malformed." },
  unauthenticated: { status: 401, retryable: false, meaning: "No valid key or session, or key revoked." },
  forbidden: { status: 403, retryable: false, meaning: "Role or credential cannot do this." },
  not_found: { status: 404, retryable: false, meaning: "Thing does not exist or is not the caller's." },
  rate_limited: { status: 429, retryable: true, meaning: "Too many requests; `Retry-After` header." },
  invalid_token: { status: 401, retryable: false, meaning: "Sign-in link or invite invalid, used or expired." },
  invalid_code: { status: 400, retryable: false, meaning: "Phone verification code wrong or expired." },
  phone_in_use: { status: 409, retryable: false, meaning: "Phone already verified on another account." },
  email_unverified: { status: 403, retryable: false, meaning: "Email not verified yet." },
  phone_unverified: { status: 403, retryable: false, meaning: "An org needs a verified phone first." },
  ip_not_allowed: { status: 403, retryable: false, meaning: "Source address not on the agent's allowlist." },
  unknown_tool: { status: 404, retryable: false, meaning: "No tool with that id or slug." },
  unknown_task_type: { status: 400, retryable: false, meaning: "Not one of the seven task types." },
  live_execute_unavailable: { status: 501, retryable: false, meaning: "Live purchases not open; use a test key." },
  credits_frozen: { status: 403, retryable: false, meaning: "Org credits frozen; reads still work." },
  insufficient_credits: { status: 402, retryable: false, meaning: "Balance cannot cover the purchase." },
  over_budget: { status: 402, retryable: false, meaning: "Agent's monthly budget cannot cover it." },
  approval_required: {
    status: 202,
    retryable: false,
    meaning: "Purchase is over the approval threshold or budget; retry with `approval_id` after approval."
  },
  approval_expired: { status: 409, retryable: false, meaning: "Approval older than 24 hours." },
  approval_rejected: { status: 403, retryable: false, meaning: "An owner declined." },
  trial_limit: { status: 429, retryable: true, meaning: "Unfunded orgs may spend 50 trial credits an hour." },
  approval_mismatch: {
    status: 409,
    retryable: false,
    meaning: "Tool, input or amount differs from what was approved."
  },
  plan_limit: {
    status: 402,
    retryable: false,
    meaning:
      "Plan limit on agents, seats, lookups or webhook endpoints reached. Daily recommend quota exhaustion answers 429 `plan_limit`."
  },
  not_purchasable: { status: 409, retryable: false, meaning: "Tool is information only or not live." },
  price_above_max: { status: 402, retryable: false, meaning: "Price (price x inputs) above `max_price`." },
  tool_paused: { status: 409, retryable: false, meaning: "Tool paused." },
  provider_error: { status: 502, retryable: true, meaning: "Provider failed after one retry; nothing charged." },
  check_failed: {
    status: 200,
    retryable: false,
    meaning: "Result failed the published check; nothing charged; `reason` given."
  },
  request_in_progress: { status: 409, retryable: true, meaning: "Same `idempotency_key` still running." },
  provider_quota: {
    status: 429,
    retryable: true,
    meaning: "Org reached today's call limit for the provider; resets 00:00 UTC."
  },
  aup_limit: { status: 429, retryable: false, meaning: "Request looks like bulk collection of personal data." },
  idempotency_conflict: { status: 409, retryable: false, meaning: "Key reused with a different request." },
  reason_required: { status: 400, retryable: false, meaning: "Action needs a written `reason`." },
  conflict: { status: 409, retryable: false, meaning: "Slug or email already exists." },
  unverified_email: { status: 401, retryable: false, meaning: "Identity provider has not verified the email." },
  invalid_state: {
    status: 400,
    retryable: false,
    meaning: "Identity-provider sign-in too slow or in another browser."
  },
  idp_failed: { status: 401, retryable: true, meaning: "Identity provider did not complete sign-in." },
  not_configured: { status: 503, retryable: false, meaning: "Feature not switched on." },
  invalid_amount: { status: 400, retryable: false, meaning: "Credit amount zero, negative or invalid." },
  capture_exceeds_hold: { status: 409, retryable: false, meaning: "Internal: charge larger than hold; blocked." },
  not_a_hold: { status: 409, retryable: false, meaning: "Internal: settlement pointed at a non-hold; blocked." },
  already_settled: { status: 409, retryable: false, meaning: "Purchase already charged or refunded." },
  invalid_credentials: { status: 401, retryable: false, meaning: "Admin sign-in failed." },
  locked: { status: 429, retryable: true, meaning: "Admin account locked 15 minutes." },
  weak_password: { status: 400, retryable: false, meaning: "Admin password under 14 characters." },
  resale_rights_missing: {
    status: 409,
    retryable: false,
    meaning: "Admin: tool cannot be sold without signed resale rights."
  },
  price_missing: { status: 409, retryable: false, meaning: "Admin: tool needs `price_per_success_credits`." },
  tool_unavailable: {
    status: 409,
    retryable: false,
    meaning: "Tool paused, unpriced or without a working provider connection."
  },
  adapter_not_ready: { status: 409, retryable: false, meaning: "Admin: no working provider connection." },
  benchmark_missing: {
    status: 409,
    retryable: false,
    meaning: "Admin: tool must have been benchmarked in the last 35 days."
  },
  below_accuracy_floor: {
    status: 409,
    retryable: false,
    meaning: "Admin: latest benchmark accuracy under the 60% floor."
  },
  not_disputable: {
    status: 409,
    retryable: false,
    meaning: "Item was not charged; only passed or partial items can be disputed."
  },
  dispute_window_closed: { status: 409, retryable: false, meaning: "Dispute must be opened within 7 days." },
  topup_cap: {
    status: 402,
    retryable: false,
    meaning: "New accounts may add up to $200 of credits in their first 14 days."
  },
  confirmation_required: {
    status: 409,
    retryable: false,
    meaning: "Admin: large adjustment needs `confirm_credits` equal to the amount."
  },
  offer_unavailable: {
    status: 409,
    retryable: false,
    meaning: "Founding price used up, ended or already used by the org."
  },
  no_saved_card: {
    status: 409,
    retryable: false,
    meaning: "Auto-reload needs a saved card (top up once with `save_card: true`)."
  },
  payment_unavailable: { status: 502, retryable: true, meaning: "Payment provider did not answer as expected." },
  invalid_signature: {
    status: 400,
    retryable: false,
    meaning: "An incoming payment webhook's signature did not verify."
  },
  method_not_allowed: {
    status: 405,
    retryable: false,
    meaning: "Method unsupported; `Allow` header lists the allowed ones."
  },
  fx_unavailable: { status: 503, retryable: true, meaning: "No USD to INR rate; INR top-ups paused." },
  last_owner: { status: 409, retryable: false, meaning: "An org must keep at least one owner." },
  payload_too_large: { status: 413, retryable: false, meaning: "Body over 1 MB." },
  internal_error: { status: 500, retryable: true, meaning: "Server-side failure." },
  unknown_endpoint: { status: 404, retryable: false, meaning: "Gateway: no endpoint with that id." },
  endpoint_on_request: { status: 409, retryable: false, meaning: "Gateway: endpoint opened per customer." },
  endpoint_unavailable: { status: 503, retryable: true, meaning: "Gateway switched off; retry later." },
  // Beyond the specification (see docs/decisions.md): no code of the spec says "this
  // replica is over capacity or shutting down, retry shortly".
  service_unavailable: {
    status: 503,
    retryable: true,
    meaning:
      "Over capacity, shutting down, or its database or mail server unreachable; retry after `Retry-After` seconds."
  },
  // Beyond the specification (docs/decisions.md, "x402 on the service"): paying per request.
  payment_required: {
    status: 402,
    retryable: false,
    meaning: "x402 is on and the request carried neither a key nor a payment; pay as `PAYMENT-REQUIRED` says."
  },
  payment_invalid: {
    status: 402,
    retryable: false,
    meaning:
      "x402 payment refused: signature, expiry, payee, network, asset or amount does not fit; `PAYMENT-REQUIRED` says what would."
  },
  payment_replayed: {
    status: 409,
    retryable: false,
    meaning: "That x402 authorisation was already used; sign a new one."
  },
  payer_spend_cap: {
    status: 429,
    retryable: true,
    meaning: "The paying address reached its x402 spend cap for the day; resets 00:00 UTC."
  }
} as const satisfies Record<string, ErrorEntry>

export type ErrorCode = keyof typeof errorCatalogue

/** Codes the service adds to the specification's table, each with its reason in docs/decisions.md. */
export const codesBeyondSpec: ReadonlyArray<ErrorCode> = [
  "service_unavailable",
  "payment_required",
  "payment_invalid",
  "payment_replayed",
  "payer_spend_cap"
]

export const errorCodes = Object.keys(errorCatalogue) as ReadonlyArray<ErrorCode>

export const isErrorCode = (value: unknown): value is ErrorCode =>
  typeof value === "string" && Object.prototype.hasOwnProperty.call(errorCatalogue, value)
