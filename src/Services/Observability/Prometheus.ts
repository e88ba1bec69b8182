import { MetricState } from "effect"
import type { MetricPair } from "effect"

/**
 * The Prometheus text format (version 0.0.4) of the Effect metric registry's snapshot,
 * followed by gauges read at scrape time. Counters, gauges and histograms are printed;
 * other metric kinds are not used by the service.
 */
export interface ScrapeGauge {
  readonly name: string
  readonly help: string
  readonly value: number
  readonly labels?: Readonly<Record<string, string>>
}

const escapeLabel = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, "\\\"")

const labelText = (labels: ReadonlyArray<readonly [string, string]>) =>
  labels.length === 0 ? "" : `{${labels.map(([key, value]) => `${key}="${escapeLabel(value)}"`).join(",")}}`

const numberText = (value: number | bigint) =>
  typeof value === "bigint" ? value.toString() : Number.isFinite(value) ? String(value) : value > 0 ? "+Inf" : "-Inf"

const sanitize = (name: string) => name.replace(/[^a-zA-Z0-9_:]/g, "_")

export const prometheusText = (
  snapshot: ReadonlyArray<MetricPair.MetricPair.Untyped>,
  gauges: ReadonlyArray<ScrapeGauge>
): string => {
  const families = new Map<string, { help: string; type: string; lines: Array<string> }>()
  const family = (name: string, help: string, type: string) => {
    const existing = families.get(name)
    if (existing !== undefined) return existing.lines
    const created = { help, type, lines: [] as Array<string> }
    families.set(name, created)
    return created.lines
  }
  for (const pair of snapshot) {
    const name = sanitize(pair.metricKey.name)
    const help = pair.metricKey.description._tag === "Some" ? pair.metricKey.description.value : name
    const labels = pair.metricKey.tags.map((tag) => [tag.key, tag.value] as const)
    const state = pair.metricState
    if (MetricState.isCounterState(state)) {
      family(name, help, "counter").push(`${name}${labelText(labels)} ${numberText(state.count)}`)
    } else if (MetricState.isGaugeState(state)) {
      family(name, help, "gauge").push(`${name}${labelText(labels)} ${numberText(state.value)}`)
    } else if (MetricState.isHistogramState(state)) {
      const lines = family(name, help, "histogram")
      // The registry's buckets are already cumulative, the last one at +Inf.
      for (const [bound, count] of state.buckets) {
        lines.push(`${name}_bucket${labelText([...labels, ["le", numberText(bound)]])} ${count}`)
      }
      lines.push(`${name}_sum${labelText(labels)} ${numberText(state.sum)}`)
      lines.push(`${name}_count${labelText(labels)} ${state.count}`)
    }
  }
  for (const gauge of gauges) {
    family(gauge.name, gauge.help, "gauge").push(
      `${gauge.name}${labelText(Object.entries(gauge.labels ?? {}))} ${numberText(gauge.value)}`
    )
  }
  const out: Array<string> = []
  for (const [name, { help, lines, type }] of families) {
    out.push(`# HELP ${name} ${help.replace(/\n/g, " ")}`, `# TYPE ${name} ${type}`, ...lines)
  }
  return out.join("\n") + "\n"
}
