import { Clock, Duration, Effect, Either, Option, Ref, Schedule } from "effect"
import type { OrgId } from "../../Domain/Ids.js"
import type { TaskTypeId } from "../../Domain/TaskType.js"
import { CatalogueRepo } from "../Catalogue/CatalogueRepo.js"
import { dayOf } from "../Ledger/Time.js"
import { Providers } from "../Providers/Providers.js"
import type { ProviderOutcome } from "../Providers/ProviderTypes.js"
import { companyDomainOf, Quotas } from "../Quotas/Quotas.js"
import type { ItemInput } from "./Checks.js"
import { mockAnswer } from "./MockTools.js"
import { PurchasingConfig, purchasingRules } from "./PurchasingConfig.js"

/**
 * Runs one item on one tool and answers what came back, or that the provider failed.
 *
 * - Test agents: the mock tool (MockTools), which can be told to fail, answer partially or
 *   fail its provider, and takes MOCK_TOOL_LATENCY_MS per try.
 * - Live agents: the tool's catalogue endpoint through the same forwarder as the gateway
 *   (Providers.send: the provider's credential, 60 s timeout). A GET sends the input as the
 *   query, other methods as the JSON body. The answer is read in the task type's canonical
 *   shape, at the top level or under `data` or `result`.
 *
 * A provider that fails (5xx, network error, no answer within 60 s) is tried once more; a
 * second failure is a `ProviderFailure`. A 4xx is an answer without a result: the check
 * fails it and nothing is charged.
 */
export interface RunnableTool {
  readonly id: string
  readonly slug: string
  readonly provider: string
  readonly task_type: TaskTypeId
  readonly check_id: string
  readonly gateway_endpoint: string
}

export type ToolAnswer =
  | { readonly _tag: "Answer"; readonly result: unknown }
  | { readonly _tag: "Refused"; readonly status: number }
  | { readonly _tag: "ProviderFailure"; readonly reason: string }

const REFUSED = Symbol("refused")
interface RefusedAnswer {
  readonly [REFUSED]: true
  readonly status: number
}
const isRefused = (value: unknown): value is RefusedAnswer =>
  typeof value === "object" && value !== null && REFUSED in value

class TryFailed {
  readonly _tag = "TryFailed"
  constructor(readonly reason: string) {}
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Fields that mark the canonical result of each task type (see Checks). */
const canonicalMarkers: { readonly [T in TaskTypeId]: ReadonlyArray<string> } = {
  email_find: ["email"],
  email_verify: ["verdict"],
  phone_find: ["phones"],
  person_enrich: ["identifiers"],
  company_enrich: ["domain"],
  web_search: ["results"],
  web_extract: ["text"]
}

/** The canonical result inside a provider's answer: the answer itself, or its `data` or `result`. */
export const canonicalResult = (taskType: TaskTypeId, data: unknown): unknown => {
  const markers = canonicalMarkers[taskType]
  const candidates = [data, isObject(data) ? data["data"] : undefined, isObject(data) ? data["result"] : undefined]
  return candidates.find((candidate) => isObject(candidate) && markers.every((field) => field in candidate)) ?? data
}

export class ToolRunner extends Effect.Service<ToolRunner>()("Purchasing/ToolRunner", {
  dependencies: [PurchasingConfig.Default, Providers.Default, CatalogueRepo.Default, Quotas.Default],
  effect: Effect.gen(function*() {
    const config = yield* PurchasingConfig
    const providers = yield* Providers
    const catalogue = yield* CatalogueRepo
    const quotas = yield* Quotas

    const mockTry = (tool: RunnableTool, input: ItemInput, attempt: number) =>
      Effect.gen(function*() {
        if (config.mockLatencyMs > 0) yield* Effect.sleep(Duration.millis(config.mockLatencyMs))
        const answer = mockAnswer(tool, input, attempt)
        return answer._tag === "Answer" ? answer.result : yield* Effect.fail(new TryFailed(answer.reason))
      })

    const judged = (tool: RunnableTool, outcome: ProviderOutcome) => {
      switch (outcome._tag) {
        case "answered":
          return Effect.succeed<unknown>(canonicalResult(tool.task_type, outcome.data))
        case "refused":
          // The provider's own "no such record" and the like: an answer with nothing to sell.
          return Effect.succeed<unknown>({ [REFUSED]: true, status: outcome.status } satisfies RefusedAnswer)
        case "failed":
          return Effect.fail(new TryFailed(`${tool.provider}: ${outcome.reason}`))
        case "timed_out":
          return Effect.fail(
            new TryFailed(`${tool.provider} did not answer within ${purchasingRules.providerTimeoutMs / 1000} s`)
          )
      }
    }

    const liveTry = (tool: RunnableTool, input: ItemInput, orgId: OrgId | null) =>
      Effect.gen(function*() {
        const endpoint = yield* catalogue.endpoint(tool.gateway_endpoint)
        if (Option.isNone(endpoint)) {
          return yield* Effect.fail(
            new TryFailed(`The endpoint ${tool.gateway_endpoint} of ${tool.slug} is not in the catalogue`)
          )
        }
        // The provider's daily call cap and the people-lookup limit count an org's purchase
        // calls as they count its gateway calls: a call over either is not made (a fallback may
        // be). The operator's benchmark runs (no org) are not counted.
        const lookupField = endpoint.value.people_lookup_field
        const [counted] = orgId === null ? [] : yield* quotas.count([{
          orgId,
          providerId: endpoint.value.provider.id,
          dailyCap: endpoint.value.provider.daily_call_cap,
          peopleDomain: lookupField === null ? null : companyDomainOf(input[lookupField]),
          day: dayOf(yield* Clock.currentTimeMillis)
        }])
        if (counted !== undefined && Either.isLeft(counted)) {
          return yield* Effect.fail(new TryFailed(counted.left.message))
        }
        const get = endpoint.value.method === "GET"
        const outcome = yield* providers.send(endpoint.value, {
          query: get ? input : undefined,
          body: get ? undefined : input,
          pathParams: input
        })
        return yield* judged(tool, outcome)
      })

    /** One item on one tool: a try and, when the provider fails, one retry. */
    /** `orgId`: the buyer's org, whose daily limits the live calls count against (null: an operator's run). */
    const run = (tool: RunnableTool, input: ItemInput, mode: "test" | "live", orgId: OrgId | null) =>
      Effect.gen(function*() {
        const attempts = yield* Ref.make(0)
        const once = Effect.flatMap(
          Ref.updateAndGet(attempts, (n) => n + 1),
          (attempt) => mode === "test" ? mockTry(tool, input, attempt) : liveTry(tool, input, orgId)
        )
        const retry = mode === "test"
          ? Schedule.recurs(1)
          : Schedule.recurs(1).pipe(Schedule.addDelay(() => Duration.millis(250)))
        return yield* once.pipe(
          Effect.retry(retry),
          Effect.map((result): ToolAnswer =>
            isRefused(result) ? { _tag: "Refused", status: result.status } : { _tag: "Answer", result }
          ),
          Effect.catchAll((failure) => Effect.succeed<ToolAnswer>({ _tag: "ProviderFailure", reason: failure.reason }))
        )
      })

    return { run } as const
  })
}) {}
