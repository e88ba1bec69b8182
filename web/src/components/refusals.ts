/**
 * Why an agent was refused and what the owner can do about it, by the error code the agent
 * got (the codes Services/Usage/Refusals.ts counts).
 */
export const refusalHelp: Record<string, { readonly reason: string; readonly todo: string }> = {
  ip_not_allowed: {
    reason: "The request came from an address that is not on the agent's IP allowlist.",
    todo: "Add the address to its allowlist (Edit), or run the agent from a listed address."
  },
  unauthenticated: {
    reason: "The agent used a key that no longer works: the agent is disabled, or its key was rotated or revoked.",
    todo: "Enable the agent, or give it its current key (Rotate key shows a new one)."
  },
  trial_limit: {
    reason: "The trial allows 50 credits of spend an hour until the org's first top-up.",
    todo: "Add credits on the Billing page to lift the limit, or wait for the next hour."
  },
  over_budget: {
    reason: "The agent's monthly budget could not cover the purchase.",
    todo: "Raise its budget (Edit), or wait for next month."
  },
  insufficient_credits: {
    reason: "The org's balance could not cover it.",
    todo: "Add credits on the Billing page, or turn on auto-reload."
  },
  credits_frozen: {
    reason: "The org's credits are frozen.",
    todo: "Contact support to find out why."
  },
  live_execute_unavailable: {
    reason: "Live purchases are closed for now.",
    todo: "Rehearse purchases with a test agent (no credits move); live gateway calls still work."
  },
  provider_quota: {
    reason: "The provider's daily call cap for the org was reached.",
    todo: "Wait for the next day (UTC)."
  },
  aup_limit: {
    reason: "Too many people lookups for one company domain today.",
    todo: "Wait for the next day (UTC); bulk collection of personal data is not allowed."
  },
  rate_limited: {
    reason: "Too many requests in a short time.",
    todo: "Slow the agent down: it should wait as long as the answer's Retry-After says."
  },
  plan_limit: {
    reason: "The org's plan allows no more of this.",
    todo: "Change plan on the Billing page."
  },
  price_above_max: {
    reason: "The price was above the most the agent said it would pay.",
    todo: "Raise the maximum price the agent sends, or let it choose a cheaper tool."
  },
  approval_rejected: {
    reason: "An owner rejected the purchase.",
    todo: "Nothing: the agent should not retry it."
  },
  approval_expired: {
    reason: "The approval was older than 24 hours.",
    todo: "The agent asks again; decide within a day."
  },
  not_purchasable: {
    reason: "The tool is not sold now.",
    todo: "Have the agent choose another tool (see Tools)."
  },
  tool_paused: {
    reason: "The tool is paused.",
    todo: "Have the agent choose another tool (see Tools)."
  },
  endpoint_on_request: {
    reason: "The endpoint is opened per customer.",
    todo: "Ask support to open it for the org."
  },
  endpoint_unavailable: {
    reason: "The gateway was switched off for a while.",
    todo: "Nothing: the agent can retry later."
  }
}

export const refusalOf = (code: string) =>
  refusalHelp[code] ?? { reason: "Refused.", todo: "See the error's documentation." }
