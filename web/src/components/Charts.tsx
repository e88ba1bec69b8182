/**
 * Small SVG bar charts (no chart library: two shapes are all the dashboard draws).
 * Values are credits as whole numbers; labels say what each bar is.
 */
export interface Bar {
  readonly label: string
  readonly value: number
  readonly title?: string
}

const format = (value: number) => value.toLocaleString("en-US")

/** One column per bar (spend per day). */
export const ColumnChart = ({ bars, label }: { readonly bars: ReadonlyArray<Bar>; readonly label: string }) => {
  const max = Math.max(1, ...bars.map((bar) => bar.value))
  const width = Math.max(bars.length * 14, 100)
  return (
    <figure className="chart" aria-label={label}>
      <svg viewBox={`0 0 ${width} 110`} preserveAspectRatio="none" role="img" aria-label={label}>
        {bars.map((bar, i) => {
          const height = (100 * bar.value) / max
          return (
            <rect
              key={bar.label}
              x={i * 14 + 2}
              y={105 - height}
              width={10}
              height={Math.max(height, bar.value > 0 ? 1 : 0)}
              className="bar"
              data-value={bar.value}
            >
              <title>{bar.title ?? `${bar.label}: ${format(bar.value)} credits`}</title>
            </rect>
          )
        })}
        <line x1={0} x2={width} y1={105.5} y2={105.5} className="axis" />
      </svg>
      <figcaption>
        <span>{bars[0]?.label}</span>
        <span>{label}, most {format(max)} cr</span>
        <span>{bars.at(-1)?.label}</span>
      </figcaption>
    </figure>
  )
}

/** One row per bar (spend per agent), with its value written beside it. */
export const RowChart = (
  { bars, label, max }: { readonly bars: ReadonlyArray<Bar>; readonly label: string; readonly max?: number }
) => {
  const top = Math.max(1, max ?? 0, ...bars.map((bar) => bar.value))
  return (
    <div className="row-chart" role="list" aria-label={label}>
      {bars.map((bar) => (
        <div key={bar.label} className="row-chart-item" role="listitem">
          <span className="row-chart-label">{bar.label}</span>
          <span className="meter">
            <span className="meter-fill" style={{ width: `${(100 * bar.value) / top}%` }} />
          </span>
          <span className="row-chart-value">{bar.title ?? `${format(bar.value)} cr`}</span>
        </div>
      ))}
    </div>
  )
}
