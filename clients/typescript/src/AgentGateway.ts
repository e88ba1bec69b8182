import type { CallRequest } from "@agent-gateway/contract/Domain/GatewayCall.js"
import type { ApprovalId, DisputeId, JobId, OrgId, ReceiptId } from "@agent-gateway/contract/Domain/Ids.js"
import type { ExecuteRequest, RecommendRequest } from "@agent-gateway/contract/Domain/Purchasing.js"
import { Effect } from "effect"
import {
  type ClientOptions,
  makeAgentGateway,
  newIdempotencyKey,
  resolveCredentials,
  type RunOptions,
  runToPromise
} from "./client.js"
import { clientError } from "./errors.js"

/**
 * The Promise API: every agent endpoint, and the org endpoints for scripts holding an org key.
 * `new AgentGateway()` reads `SERVICE_API_KEY` and `SERVICE_API_URL`. Every method takes an
 * optional `{ signal }` (an aborted call rejects with `aborted`) and rejects with `ServiceError`.
 */
export interface CallOptions {
  readonly signal?: AbortSignal | undefined
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] }
type Gateway = Effect.Effect.Success<ReturnType<typeof makeAgentGateway>>
type Api = Gateway["api"]
/** An org endpoint's request without its path (the org is the scope's). */
type OrgRequest<F extends (request: any) => any> = Omit<Parameters<F>[0], "path" | "withResponse">

/**
 * An id the caller holds, typed as the contract's id of its record. The request's encoding
 * checks that it is a UUID, so a malformed id rejects before anything is sent.
 */
const idOf = <Id extends string>(id: string) => id as Id

export class AgentGateway {
  private readonly gateway: ReturnType<typeof makeAgentGateway>

  constructor(options: ClientOptions = {}) {
    // The key is resolved now, so a missing one (and no payer) fails here rather than at the first call.
    resolveCredentials(options)
    this.gateway = Effect.runSync(Effect.cached(makeAgentGateway(options)))
  }

  private run<A, E>(
    call: (api: Gateway["api"]) => Effect.Effect<A, E>,
    options?: CallOptions,
    runOptions?: RunOptions
  ) {
    return runToPromise(Effect.flatMap(this.gateway, (gateway) => gateway.run(call, runOptions)), options?.signal)
  }

  /** Ranked tools for one of the seven task types (`task_type`) or a task in free text (`task`). */
  recommend(request: Mutable<typeof RecommendRequest.Type>, options?: CallOptions) {
    return this.run((api) => api.purchasing.recommend({ payload: request }), options)
  }

  /**
   * Buys results: 1–25 inputs answer the result, more a job (`status: "queued"`). Every try
   * carries the same `idempotency_key` (made here when none is given), so a retry never buys
   * twice. Nothing charged and every result failed its check: rejects with `check_failed`;
   * over the approval threshold or budget: `approval_required` (its `details.approval`).
   * With a `payer` and no key, the purchase is paid with x402 (`upto` its maximum; only what
   * passed is settled) and the idempotency key is the payment's `payment-identifier`; the
   * answer's `payment` is the settlement.
   */
  execute(request: Mutable<typeof ExecuteRequest.Type>, options?: CallOptions) {
    const payload = { ...request, idempotency_key: request.idempotency_key ?? newIdempotencyKey() }
    return this.run((api) => api.purchasing.execute({ payload }), options, {
      paymentIdentifier: payload.idempotency_key
    })
  }

  job(id: string, options?: CallOptions) {
    return this.run((api) => api.purchasing.job({ path: { id: idOf<JobId>(id) } }), options).then((answer) =>
      answer.job
    )
  }

  /** Polls a job until it is done, calling `onProgress` each time its progress moves. */
  async waitForJob(
    id: string,
    options: CallOptions & {
      readonly pollIntervalMs?: number
      readonly onProgress?: (job: Awaited<ReturnType<AgentGateway["job"]>>) => void
    } = {}
  ) {
    let last = -1
    for (;;) {
      const job = await this.job(id, options)
      if (job.progress.done !== last) {
        last = job.progress.done
        options.onProgress?.(job)
      }
      if (job.status === "done") return job
      await new Promise((resolve) => setTimeout(resolve, options.pollIntervalMs ?? 2_000))
      if (options.signal?.aborted) throw clientError("aborted", "The caller aborted the wait")
    }
  }

  /** Every receipt of the org, newest first, fetched page by page as the loop goes. */
  async *receipts(options: CallOptions & { readonly pageSize?: number } = {}) {
    let after: ReceiptId | undefined
    for (;;) {
      const page = await this.run(
        (api) => api.purchasing.receipts({ urlParams: { limit: options.pageSize ?? 50, starting_after: after } }),
        options
      )
      yield* page.receipts
      const last = page.receipts.at(-1)
      if (!page.has_more || last === undefined) return
      after = last.id
    }
  }

  receipt(id: string, options?: CallOptions) {
    return this.run((api) => api.purchasing.receipt({ path: { id: idOf<ReceiptId>(id) } }), options).then((answer) =>
      answer.receipt
    )
  }

  openDispute(request: { receipt_id: string; item_index: number; reason?: string }, options?: CallOptions) {
    return this.run(
      (api) => api.purchasing.openDispute({ payload: { ...request, receipt_id: idOf<ReceiptId>(request.receipt_id) } }),
      options
    ).then((a) => a.dispute)
  }

  dispute(id: string, options?: CallOptions) {
    return this.run((api) => api.purchasing.dispute({ path: { id: idOf<DisputeId>(id) } }), options).then((answer) =>
      answer.dispute
    )
  }

  approval(id: string, options?: CallOptions) {
    return this.run((api) => api.purchasing.approval({ path: { id: idOf<ApprovalId>(id) } }), options).then((answer) =>
      answer.approval
    )
  }

  balance(options?: CallOptions) {
    return this.run((api) => api.gateway.balance(), options)
  }

  agent(options?: CallOptions) {
    return this.run((api) => api.agentSelf.agent(), options).then((answer) => answer.agent)
  }

  /**
   * A gateway call: the provider's own parameters in, the provider's own answer out. With a
   * `payer` and no key, paid with x402 when the service asks; the answer's `payment` is the settlement.
   */
  call(request: Mutable<typeof CallRequest.Type>, options?: CallOptions) {
    return this.run((api) => api.gateway.call({ payload: request }), options)
  }

  /**
   * The endpoints under `/v1/orgs/{orgId}` for a script holding an org key (or a session):
   * agents, usage, receipts (and their items' inputs and results), approvals and events.
   */
  org(orgId: string) {
    const path = { orgId: idOf<OrgId>(orgId) }
    return {
      agents: (request: OrgRequest<Api["agents"]["list"]>, options?: CallOptions) =>
        this.run((api) => api.agents.list({ ...request, path }), options),
      /** A new agent; the answer's `key` is shown only now. */
      createAgent: (request: OrgRequest<Api["agents"]["create"]>, options?: CallOptions) =>
        this.run((api) => api.agents.create({ ...request, path }), options),
      usage: (request: OrgRequest<Api["usage"]["get"]>, options?: CallOptions) =>
        this.run((api) => api.usage.get({ ...request, path }), options),
      receipts: (request: OrgRequest<Api["orgPurchasing"]["receipts"]>, options?: CallOptions) =>
        this.run((api) => api.orgPurchasing.receipts({ ...request, path }), options),
      /** A receipt's items with their inputs and kept results, by index (`starting_after`: the last index seen). */
      receiptItems: (id: string, request: OrgRequest<Api["orgPurchasing"]["receiptItems"]>, options?: CallOptions) =>
        this.run(
          (api) => api.orgPurchasing.receiptItems({ ...request, path: { ...path, id: idOf<ReceiptId>(id) } }),
          options
        ),
      approvals: (request: OrgRequest<Api["orgPurchasing"]["approvals"]>, options?: CallOptions) =>
        this.run((api) => api.orgPurchasing.approvals({ ...request, path }), options),
      approve: (id: string, note?: string, options?: CallOptions) =>
        this.run(
          (api) =>
            api.orgPurchasing.approve({
              path: { ...path, id: idOf<ApprovalId>(id) },
              payload: note === undefined ? {} : { note }
            }),
          options
        ).then((answer) => answer.approval),
      reject: (id: string, note?: string, options?: CallOptions) =>
        this.run(
          (api) =>
            api.orgPurchasing.reject({
              path: { ...path, id: idOf<ApprovalId>(id) },
              payload: note === undefined ? {} : { note }
            }),
          options
        ).then((answer) => answer.approval),
      events: (request: OrgRequest<Api["events"]["list"]>, options?: CallOptions) =>
        this.run((api) => api.events.list({ ...request, path }), options)
    }
  }

  /** The gateway catalogue, priced for this key's plan. */
  endpoints(
    query: { q?: string; category?: string; provider?: string; availability?: string } = {},
    options?: CallOptions
  ) {
    return this.run((api) => api.public.endpoints({ urlParams: query as never }), options).then((a) => a.endpoints)
  }
}
