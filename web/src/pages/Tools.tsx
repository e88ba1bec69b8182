import { useApiQuery } from "../api/hooks.js"
import { Table } from "../components/PagedTable.js"
import { Credits, Loaded, Status } from "../components/ui.js"

const percent = (value: number) => `${Math.round(value * 100)}%`

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
                  accuracy {percent(tool.latest_benchmark.accuracy)}, coverage {percent(tool.latest_benchmark.coverage)}
                  <br />
                  <small>
                    p50 {tool.latest_benchmark.latency_p50_ms} ms, {tool.latest_benchmark.sample_size} samples,{" "}
                    {tool.latest_benchmark.date}
                  </small>
                </td>
                <td>
                  <small>{tool.check.verifies}</small>
                  <br />
                  <code>{tool.check.id}@{tool.check.version}</code>
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
