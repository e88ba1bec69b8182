import { useState } from "react"
import { useApiQuery } from "../api/hooks.js"
import { useOrg } from "../api/org.js"
import { credits, creditsInDollars } from "../components/format.js"
import { Table } from "../components/PagedTable.js"
import { Empty, Loaded, Status } from "../components/ui.js"

const PAGE = 50

/** The gateway's endpoints, searched, with their price per call on the org's plan. */
export const CataloguePage = () => {
  const org = useOrg()
  const [q, setQ] = useState("")
  const [shown, setShown] = useState(PAGE)
  const details = useApiQuery(["org", org.id], (c) => c.orgs.get({ path: { orgId: org.id } }))
  const plan = details.data?.org.plan
  const endpoints = useApiQuery(
    ["endpoints", q.trim(), plan],
    (c) => c.public.endpoints({ urlParams: { q: q.trim() || undefined, plan } }),
    { enabled: plan !== undefined }
  )
  return (
    <div className="stack">
      <h1>Catalogue</h1>
      <label>
        Search endpoints
        <input
          type="search"
          value={q}
          placeholder="weather, email, search…"
          onChange={(e) => {
            setQ(e.target.value)
            setShown(PAGE)
          }}
        />
      </label>
      <Loaded query={endpoints}>
        {(data) =>
          data.endpoints.length === 0 ? <Empty>No endpoint matches.</Empty> : (
            <>
              <p className="muted">{data.endpoints.length} endpoints, prices for the {plan} plan.</p>
              <Table
                rows={data.endpoints.slice(0, shown)}
                head={["Endpoint", "Provider", "Category", "Price per call", "Availability"]}
                row={(e) => (
                  <tr key={e.id}>
                    <td>
                      <code>{e.id}</code>
                      <br />
                      <small>{e.method} {e.path}</small>
                    </td>
                    <td>{e.provider_name}</td>
                    <td>{e.category}</td>
                    <td>{credits(e.price_per_call)} cr ({creditsInDollars(e.price_per_call)})</td>
                    <td>
                      <Status value={e.availability} />
                    </td>
                  </tr>
                )}
              />
              {shown < data.endpoints.length
                ? <button type="button" className="secondary" onClick={() => setShown(shown + PAGE)}>Show more</button>
                : null}
            </>
          )}
      </Loaded>
    </div>
  )
}
