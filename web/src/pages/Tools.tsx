import type { Benchmark as BenchmarkReport } from "@agent-gateway/contract/Domain/Tool.js"
import { useApiQuery } from "../api/hooks.js"
import { Table } from "../components/PagedTable.js"
import { Credits, Loaded, Status } from "../components/ui.js"

const percent = (value: number) => `${Math.round(value * 100)}%`

/** A tool's latest benchmark, or that it has none yet (a new tool is listed before its first run). */
const Benchmark = ({ report }: { report: BenchmarkReport | null }) =>
  report === null ? <small>not benchmarked yet</small> : (
    <>
      accuracy {percent(report.accuracy)}, coverage {percent(report.coverage)}
      <br />
      <small>
        p50 {report.latency_p50_ms} ms, {report.sample_size} samples, {report.date}
      </small>
    </>
  )

/** The tools sold as verified results: price, score, the check each result must pass, the latest benchmark. */
export const ToolsPage = () => {
  const tools = useApiQuery(["tools"], (c) => c.public.tools())
  return (
    <div className="stack">
      <h1>Tools</h1>
      <Loaded query={tools}>
        {(data) => (
          <Table
            rows={data.tools}
            head={["Tool", "Task", "Price per result", "Benchmark", "Check", "Sold"]}
            row={(tool) => (
              <tr key={tool.id}>
                <td>
                  {tool.name}
                  <br />
                  <small>{tool.provider_name}</small>
                </td>
                <td>{tool.task_type}</td>
                <td>{tool.price_per_success === null ? "—" : <Credits amount={tool.price_per_success} />}</td>
                <td>
                  <Benchmark report={tool.latest_benchmark} />
                </td>
                <td>
                  <small title={`${tool.check.id}@${tool.check.version}`}>{tool.check.verifies}</small>
                </td>
                <td>
                  {tool.purchasable ? <Status value="purchasable" /> : (
                    <>
                      <Status value={tool.status} />
                      <br />
                      <small>{tool.unavailable_reasons.join(", ")}</small>
                    </>
                  )}
                </td>
              </tr>
            )}
          />
        )}
      </Loaded>
    </div>
  )
}
