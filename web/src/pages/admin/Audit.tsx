import { useCursorPages } from "../../api/hooks.js"
import { Empty, Loaded, Pager, When } from "../../components/ui.js"
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
      <Loaded query={entries}>
        {(data) => (
          <>
            {data.entries.length === 0 ? <Empty>Nothing yet.</Empty> : (
              <div className="table-scroll">
                <table>
                  <thead>
                    <tr>
                      <th>When</th>
                      <th>Who</th>
                      <th>Action</th>
                      <th>Target</th>
                      <th>Reason</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.entries.map((e) => (
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
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            <Pager
              page={pages.page}
              hasMore={data.has_more}
              onPrevious={pages.previous}
              onNext={() => pages.next(data.entries.at(-1)!.id)}
            />
          </>
        )}
      </Loaded>
    </section>
  )
}
