import { Effect } from "effect"
import type { AuthenticatedAgent } from "../../Domain/Current.js"
import { FORMULA_VERSION } from "../../Domain/Formula.js"
import { amountOf } from "../../Domain/Money.js"
import type { RecommendResult } from "../../Domain/Purchasing.js"
import { isTaskTypeId, type TaskTypeId, taskTypeIds } from "../../Domain/TaskType.js"
import { InvalidInput, UnknownTaskType } from "../../Errors/ApiErrors.js"
import { Tools } from "../Tools/Tools.js"
import { RecommendQuota } from "./RecommendQuota.js"
import { matchTaskType } from "./TaskMatcher.js"

/**
 * `POST /v1/recommend`: the tools of a task type ranked by the published formula. The task
 * type is given (`task_type`) or found in free text (`task`) by the keyword table of
 * TaskMatcher. RecommendQuota are counted only for answered calls.
 */
export class Recommend extends Effect.Service<Recommend>()("Purchasing/Recommend", {
  dependencies: [RecommendQuota.Default],
  effect: Effect.gen(function*() {
    const tools = yield* Tools
    const quotas = yield* RecommendQuota

    const resolveTaskType = (
      request: { readonly task_type?: string | undefined; readonly task?: string | undefined }
    ) =>
      Effect.gen(function*() {
        if (request.task_type !== undefined && request.task !== undefined) {
          return yield* new InvalidInput({ message: "Send either `task_type` or `task`, not both" })
        }
        if (request.task_type !== undefined) {
          if (!isTaskTypeId(request.task_type)) {
            return yield* new UnknownTaskType({
              message: `Unknown task type ${JSON.stringify(request.task_type)}; expected one of ${
                taskTypeIds.join(", ")
              }`
            })
          }
          return { taskType: request.task_type as TaskTypeId, match: null }
        }
        if (request.task === undefined || request.task.trim().length === 0) {
          return yield* new InvalidInput({
            message: "Send `task_type` (one of the seven task types) or free text `task`"
          })
        }
        const match = matchTaskType(request.task)
        if (match === undefined) {
          return yield* new UnknownTaskType({
            message: `No task type matches the text; use task_type, one of ${taskTypeIds.join(", ")}`
          })
        }
        return {
          taskType: match.task_type,
          match: { method: "keywords" as const, matched_words: match.matched_words, score: match.score }
        }
      })

    const recommend = (
      agent: AuthenticatedAgent,
      request: { readonly task_type?: string | undefined; readonly task?: string | undefined }
    ) =>
      Effect.gen(function*() {
        const { match, taskType } = yield* resolveTaskType(request)
        const usage = yield* quotas.consume(agent.org_id, agent.org_plan, request.task !== undefined)
        const ranked = yield* tools.scored(taskType)
        return {
          task_type: taskType,
          task_match: match,
          formula_version: FORMULA_VERSION,
          tools: ranked.map(({ parts, rank, score, tool }) => ({
            rank,
            tool_id: tool.row.id,
            slug: tool.row.slug,
            name: tool.row.name,
            provider: tool.row.provider,
            provider_name: tool.row.provider_name,
            status: tool.row.status,
            purchasable: tool.purchasable,
            price_per_success: tool.price === null ? null : amountOf(tool.price),
            score,
            parts,
            check: { id: tool.row.check_id, version: tool.row.check_version, verifies: tool.row.check_verifies }
          })),
          lookups_today: {
            score_lookups: usage.score_lookups,
            free_text_lookups: usage.free_text_lookups,
            resets_at: usage.resets_at.toISOString()
          }
        } satisfies RecommendResult
      })

    return { recommend } as const
  })
}) {}
