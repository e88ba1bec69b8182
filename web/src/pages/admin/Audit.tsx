import { useCursorPages } from "../../api/hooks.js"
import { PagedTable } from "../../components/PagedTable.js"
import { When } from "../../components/ui.js"
import { useAdminQuery } from "./adminApi.js"

/** The administrators' audit log, newest first (append-only). */
export const AuditPage = () => {
  const pages = useCursorPages()
  const entries = useAdminQuery(
    ["audit", pages.after],
    (c) => c.adminAudit.list({ urlParams: { limit: 50, starting_after: pages.after } })
  )
  return (
    <section className="stack">
      <h1>Audit log</h1>
      <PagedTable
        query={entries}
        pages={pages}
        rows={(data) => data.entries}
        empty="Nothing yet."
        head={["When", "Who", "Action", "Target", "Reason"]}
        row={(e) => (
          <tr key={e.id}>
            <td>
              <When at={e.created_at} />
            </td>
            <td>{e.admin_email}</td>
            <td>
              <code>{e.action}</code>
            </td>
            <td>
              {e.target_type} <code>{e.target_id}</code>
            </td>
            <td>{e.reason ?? ""}</td>
          </tr>
        )}
      />
    </section>
  )
}
