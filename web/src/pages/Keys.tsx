import type { OrgKeyId } from "@agent-gateway/contract/Domain/Ids.js"
import { useState } from "react"
import { useApiMutation, useApiQuery } from "../api/hooks.js"
import { useOrg } from "../api/org.js"
import { Table } from "../components/PagedTable.js"
import { ErrorNotice, Loaded, ORG_KEY_NOTE, Status, useSecretOnce, When } from "../components/ui.js"

const SECRET_SHOWN_MS = 10 * 60 * 1000

/** Org keys for scripts (owners make and revoke them; the secret is shown once). */
export const KeysPage = () => {
  const org = useOrg()
  const keys = useApiQuery(["org-keys", org.id], (c) => c.orgKeys.list({ path: { orgId: org.id } }))
  const [name, setName] = useState("")
  const [scope, setScope] = useState<"read" | "write">("read")
  const secret = useSecretOnce(SECRET_SHOWN_MS)
  const create = useApiMutation((c) => c.orgKeys.create({ path: { orgId: org.id }, payload: { name, scope } }), [[
    "org-keys",
    org.id
  ]])
  const revoke = useApiMutation((c, keyId: OrgKeyId) => c.orgKeys.revoke({ path: { orgId: org.id, keyId } }), [[
    "org-keys",
    org.id
  ]])
  return (
    <div className="stack">
      <h1>Org keys</h1>
      {secret.view}
      {org.role === "owner"
        ? (
          <form
            className="card inline"
            aria-label="New org key"
            onSubmit={(event) => {
              event.preventDefault()
              create.mutate(undefined, {
                onSuccess: (made) => {
                  secret.show({ title: `Secret of ${made.key.name}`, secret: made.secret, note: ORG_KEY_NOTE })
                  setName("")
                }
              })
            }}
          >
            <label>
              Name
              <input required value={name} onChange={(e) => setName(e.target.value)} />
            </label>
            <label>
              Scope
              <select value={scope} onChange={(e) => setScope(e.target.value as "read" | "write")}>
                <option value="read">read</option>
                <option value="write">write</option>
              </select>
            </label>
            <button type="submit" disabled={create.isPending}>Create key</button>
            <ErrorNotice error={create.error} />
          </form>
        )
        : <p className="muted">Only owners make and revoke org keys.</p>}
      <ErrorNotice error={revoke.error} />
      <Loaded query={keys}>
        {(data) => (
          <Table
            empty="No org keys."
            rows={data.keys}
            head={["Name", "Scope", "Prefix", "Made by", "Last used", ""]}
            row={(key) => (
              <tr key={key.id} data-testid={`org-key-${key.name}`}>
                <td>{key.name}</td>
                <td>
                  <Status value={key.scope} />
                </td>
                <td>
                  <code>{key.prefix}</code>
                </td>
                <td>{key.created_by_email}</td>
                <td>
                  <When at={key.last_used_at} />
                </td>
                <td>
                  {org.role === "owner"
                    ? (
                      <button
                        type="button"
                        className="danger small"
                        onClick={() => confirm(`Revoke ${key.name}?`) && revoke.mutate(key.id)}
                      >
                        Revoke
                      </button>
                    )
                    : null}
                </td>
              </tr>
            )}
          />
        )}
      </Loaded>
    </div>
  )
}
