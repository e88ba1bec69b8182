import { useState } from "react"
import { Table } from "../../components/PagedTable.js"
import { ErrorNotice, Loaded, Status } from "../../components/ui.js"
import { useAdminMutation, useAdminQuery } from "./adminApi.js"

/** Tools with their status and publishing gates; pause with a reason, resume when the gates pass. */
export const ToolsAdminPage = () => {
  const tools = useAdminQuery(["tools"], (c) => c.adminTools.list())
  const [reasons, setReasons] = useState<Record<string, string>>({})
  const pause = useAdminMutation(
    (c, slug: string) => c.adminTools.pause({ path: { tool: slug }, payload: { reason: reasons[slug] } }),
    [["tools"]]
  )
  const resume = useAdminMutation((c, slug: string) => c.adminTools.resume({ path: { tool: slug } }), [["tools"]])
  return (
    <section className="stack">
      <h1>Tools</h1>
      <ErrorNotice error={pause.error ?? resume.error} />
      <Loaded query={tools}>
        {(data) => (
          <Table
            empty="No tools."
            rows={data.tools}
            head={["Tool", "Status", "Price", "Gates", ""]}
            row={(tool) => (
              <tr key={tool.id} data-testid={`tool-${tool.slug}`}>
                <td>
                  {tool.name}
                  <br />
                  <small>{tool.slug}</small>
                </td>
                <td>
                  <Status value={tool.status} />
                  {tool.paused_reason === null ? null : (
                    <>
                      <br />
                      <small>{tool.paused_reason}</small>
                    </>
                  )}
                </td>
                <td>{tool.price_per_success_credits === null ? "—" : `${tool.price_per_success_credits} cr`}</td>
                <td>
                  <small>
                    {tool.unavailable_reasons.length === 0 ? "all pass" : tool.unavailable_reasons.join(", ")}
                  </small>
                </td>
                <td>
                  {tool.status === "paused"
                    ? (
                      <button type="button" className="secondary small" onClick={() => resume.mutate(tool.slug)}>
                        Resume
                      </button>
                    )
                    : (
                      <div className="inline">
                        <label>
                          Reason
                          <input
                            value={reasons[tool.slug] ?? ""}
                            onChange={(e) => setReasons({ ...reasons, [tool.slug]: e.target.value })}
                          />
                        </label>
                        <button type="button" className="danger small" onClick={() => pause.mutate(tool.slug)}>
                          Pause
                        </button>
                      </div>
                    )}
                </td>
              </tr>
            )}
          />
        )}
      </Loaded>
    </section>
  )
}
