/**
 * The TypeScript client of the Agent Purchasing and Gateway Service: the Promise API
 * (`AgentGateway`), the Effect API (`makeAgentGateway`, `clientLayer`), the errors, the retry
 * rules, paying per request with x402 (`payer`), receipt and webhook verification, and the
 * contract's money helpers (a decoded record's bigint credits back to the wire's `{credits, usd}`).
 */
export { amountOf, creditsToUsd } from "@agent-gateway/contract/Domain/Money.js"
export { AgentGateway, type CallOptions } from "./AgentGateway.js"
export {
  type AgentGatewayEffect,
  type ApiClient,
  clientLayer,
  type ClientOptions,
  DEFAULT_BASE_URL,
  makeAgentGateway,
  resolveCredentials,
  resolveOptions,
  type RunOptions
} from "./client.js"
export { type AnyErrorCode, type ClientErrorCode, isServiceError, ServiceError } from "./errors.js"
export { type Paid, type Payer, type PaymentLimits, type PaymentResponse } from "./payments.js"
export * from "./receipts.js"
export { backoffMs, delayMs, type RetryPolicy, retryPolicy, retrySchedule } from "./retry.js"
export * from "./webhooks.js"
