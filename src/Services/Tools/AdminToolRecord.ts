import { priceAt } from "../../Domain/ToolGates.js"
import { unavailableReasons } from "./Tools.js"
import type { ToolRow } from "./ToolsRepo.js"

/** A tool as administrators see it: its gates, adapter, scheduled price and pause reason. */
export const adminToolRecord = (row: ToolRow, now: Date) => {
  const unavailable = unavailableReasons(row, now)
  const price = priceAt(row, now)
  const scheduled = row.next_price_credits !== null && row.next_price_from !== null &&
    row.next_price_from.getTime() > now.getTime()
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    provider: row.provider,
    provider_name: row.provider_name,
    task_type: row.task_type,
    description: row.description,
    status: row.status,
    paused_reason: row.paused_reason,
    resale_rights: row.resale_rights,
    price_per_success_credits: price === null ? null : price.toString(),
    next_price: scheduled
      ? { credits: row.next_price_credits!.toString(), valid_from: row.next_price_from!.toISOString() }
      : null,
    gateway_endpoint: row.gateway_endpoint,
    input: row.input,
    check: { id: row.check_id, version: row.check_version, verifies: row.check_verifies },
    adapter: row.adapter_ok === null ? null : { ok: row.adapter_ok, problem: row.adapter_problem },
    latest_benchmark: row.latest_benchmark_date === null || row.latest_accuracy === null
      ? null
      : { date: row.latest_benchmark_date, accuracy: row.latest_accuracy },
    purchasable: unavailable.length === 0,
    unavailable_reasons: unavailable
  }
}
