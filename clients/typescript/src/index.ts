/**
 * The TypeScript client of the Agent Purchasing and Gateway Service: the Promise API
 * (`AgentGateway`), the Effect API (`makeAgentGateway`, `clientLayer`), the errors, the retry
 * rules, receipt and webhook verification, and the contract's money helpers (a decoded
 * record's bigint credits back to the wire's `{credits, usd}`).
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
  resolveOptions
} from "./client.js"
export { type AnyErrorCode, type ClientErrorCode, isServiceError, ServiceError } from "./errors.js"
export * from "./receipts.js"
export { backoffMs, delayMs, type RetryPolicy, retryPolicy, retrySchedule } from "./retry.js"
export * from "./webhooks.js"
