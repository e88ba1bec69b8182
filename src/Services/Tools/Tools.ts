import { Clock, Effect, Schema } from "effect"
import { compareRank, scoreOf, type ScoreParts, scoreParts } from "../../Domain/Formula.js"
import { amountOf } from "../../Domain/Money.js"
import type { TaskTypeId } from "../../Domain/TaskType.js"
import { type Benchmark, ToolEntry, type ToolJson } from "../../Domain/Tool.js"
import { failedGates, priceAt, type ToolGate } from "../../Domain/ToolGates.js"
import { readDataFile } from "../DataFiles.js"
import { type ToolRow, ToolsRepo } from "./ToolsRepo.js"

/** A tool with its latest benchmark, as the services use it. */
export interface ToolRecord {
  readonly row: ToolRow
  /** The price in effect now. */
  readonly price: bigint | null
  readonly purchasable: boolean
  /** Why it is not sold now: `tool_paused`, `information_only` or the gates it fails. */
  readonly unavailable: ReadonlyArray<UnavailableReason>
  /** Null until the tool is first benchmarked (it is listed, not scored or recommended). */
  readonly latest: Benchmark | null
}

export type UnavailableReason = ToolGate | "tool_paused" | "information_only"

/** Why a tool is not sold at `now` (empty when it is). */
export const unavailableReasons = (row: ToolRow, now: Date): ReadonlyArray<UnavailableReason> => {
  if (row.status === "paused") return ["tool_paused"]
  if (row.status === "information_only") return ["information_only"]
  return failedGates({
    resale_rights: row.resale_rights,
    price: priceAt(row, now),
    adapter_ok: row.adapter_ok,
    benchmark: row.latest_benchmark_date === null || row.latest_accuracy === null
      ? null
      : { date: row.latest_benchmark_date, accuracy: row.latest_accuracy }
  }, now)
}

export interface ScoredTool {
  readonly tool: ToolRecord
  readonly score: number
  readonly parts: ScoreParts
  readonly rank: number
}

const rankable = (entry: Omit<ScoredTool, "rank">) => ({
  slug: entry.tool.row.slug,
  score: entry.score,
  price_per_success_credits: entry.tool.price === null ? null : Number(entry.tool.price)
})

/** Tools, their benchmark reports and the scores the published formula gives them. */
export class Tools extends Effect.Service<Tools>()("Tools/Tools", {
  dependencies: [ToolsRepo.Default],
  effect: Effect.gen(function*() {
    const repo = yield* ToolsRepo

    const load = Effect.gen(function*() {
      const tools = yield* readDataFile("tools.json", Schema.Array(ToolEntry))
      yield* repo.upsert(tools)
      return tools.length
    })

    const records = Effect.gen(function*() {
      const [rows, benchmarks] = yield* Effect.all([repo.all, repo.benchmarks], { concurrency: 2 })
      const now = new Date(yield* Clock.currentTimeMillis)
      const latest = new Map<string, Benchmark>()
      for (const { benchmark, tool_id } of benchmarks) {
        if (!latest.has(tool_id)) latest.set(tool_id, benchmark)
      }
      return rows.map((row): ToolRecord => {
        const unavailable = unavailableReasons(row, now)
        return {
          row,
          price: priceAt(row, now),
          latest: latest.get(row.id) ?? null,
          unavailable,
          purchasable: unavailable.length === 0
        }
      })
    })

    const toPublic = (record: ToolRecord): ToolJson => ({
      id: record.row.id,
      slug: record.row.slug,
      name: record.row.name,
      provider: record.row.provider,
      provider_name: record.row.provider_name,
      task_type: record.row.task_type,
      description: record.row.description,
      price_per_success: record.price === null ? null : amountOf(record.price),
      status: record.row.status,
      purchasable: record.purchasable,
      unavailable_reasons: record.unavailable,
      paused_reason: record.row.paused_reason,
      input: record.row.input,
      check: { id: record.row.check_id, version: record.row.check_version, verifies: record.row.check_verifies },
      latest_benchmark: record.latest
    })

    /**
     * Scores every benchmarked tool with the formula and ranks them within their task type
     * (the formula reads the benchmark: a tool without one has no score).
     */
    const scored = (taskType?: TaskTypeId) =>
      Effect.map(records, (all) => {
        const byType = new Map<TaskTypeId, Array<Omit<ScoredTool, "rank">>>()
        for (const tool of all) {
          if (taskType !== undefined && tool.row.task_type !== taskType) continue
          if (tool.latest === null) continue
          const parts = scoreParts(tool.latest, tool.price === null ? null : Number(tool.price))
          const list = byType.get(tool.row.task_type) ?? []
          list.push({ tool, parts, score: scoreOf(parts) })
          byType.set(tool.row.task_type, list)
        }
        return Array.from(byType.values()).flatMap((list) =>
          list
            .sort((a, b) => compareRank(rankable(a), rankable(b)))
            .map((entry, index): ScoredTool => ({ ...entry, rank: index + 1 }))
        )
      })

    const list = Effect.map(records, (all) => all.map(toPublic))

    return { load, records, list, scored, toPublic, benchmarks: repo.benchmarks } as const
  })
}) {}
