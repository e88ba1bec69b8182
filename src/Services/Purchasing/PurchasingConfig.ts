import { Config, Effect } from "effect"
import { AppConfig } from "../AppConfig.js"

/**
 * Settings of purchasing, read once from the environment:
 * - LIVE_EXECUTE_ENABLED (default false; read by AppConfig, since an org's usage reports it
 *   too): live agents' purchases call the providers; off, they answer 501
 *   `live_execute_unavailable`. Only tests switch it on for now.
 * - MOCK_TOOL_LATENCY_MS (default 0): how long a mock tool takes to answer one try.
 * - JOB_WORKERS (default 2): jobs one replica runs at the same time.
 * - JOB_POLL_INTERVAL_MS (default 1000): how often idle workers look for jobs (a replica
 *   that accepts a job wakes its own workers at once).
 * - IDEMPOTENCY_LEASE_MS (default 20000): the lease of a direct purchase running under a
 *   key, renewed every third of it; after a crash the key's next request finishes the
 *   purchase once the lease lapsed.
 */
export class PurchasingConfig extends Effect.Service<PurchasingConfig>()("Purchasing/PurchasingConfig", {
  dependencies: [AppConfig.Default],
  effect: Effect.gen(function*() {
    const liveExecuteEnabled = (yield* AppConfig).livePurchasesOpen
    const mockLatencyMs = yield* Config.integer("MOCK_TOOL_LATENCY_MS").pipe(Config.withDefault(0))
    const jobWorkers = yield* Config.integer("JOB_WORKERS").pipe(Config.withDefault(2))
    const jobPollIntervalMs = yield* Config.integer("JOB_POLL_INTERVAL_MS").pipe(Config.withDefault(1000))
    const leaseMs = yield* Config.integer("IDEMPOTENCY_LEASE_MS").pipe(Config.withDefault(20_000))
    return {
      liveExecuteEnabled,
      mockLatencyMs: Math.max(0, mockLatencyMs),
      jobWorkers: Math.max(1, jobWorkers),
      jobPollIntervalMs: Math.max(10, jobPollIntervalMs),
      leaseMs: Math.max(300, leaseMs)
    } as const
  })
}) {}

/** Fixed rules of purchasing (from the specification). */
export const purchasingRules = {
  maxInputs: 1000,
  /** Items a request runs straight away; more become a job, run this many at a time. */
  directLimit: 25,
  batchSize: 25,
  jobRunTimeMs: 2 * 60 * 60 * 1000,
  disputeWindowMs: 7 * 24 * 60 * 60 * 1000,
  idempotencyRetentionMs: 24 * 60 * 60 * 1000,
  /** A provider try times out after this long; a failed try is retried once. */
  providerTimeoutMs: 60_000,
  /**
   * An item is claimed for this long when it starts. It is longer than the worst case of
   * one item (two tries of the tool and two of its fallback, 60 s each), so a live claim is
   * never taken over; only a claim left by a crashed replica expires.
   */
  itemClaimMs: 5 * 60 * 1000,
  /** A job's lease, renewed after every batch; another replica may take it once it lapses. */
  jobLeaseMs: 10 * 60 * 1000,
  /** Holds of a direct purchase outlive its claim; jobs keep the ledger's default (3 hours). */
  directHoldTtlMs: 15 * 60 * 1000
} as const
