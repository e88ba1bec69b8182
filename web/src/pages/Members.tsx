import type { InviteId, UserId } from "@agent-gateway/contract/Domain/Ids.js"
import { useState } from "react"
import { useApiMutation, useApiQuery } from "../api/hooks.js"
import { useOrg } from "../api/org.js"
import { Table } from "../components/PagedTable.js"
import { ErrorNotice, Loaded, Status, When } from "../components/ui.js"

/** Members and invitations: invite, change role, remove (the last owner stays: the service says why). */
export const MembersPage = () => {
  const org = useOrg()
  const members = useApiQuery(["members", org.id], (c) => c.orgs.members({ path: { orgId: org.id } }))
  const invites = useApiQuery(["invites", org.id], (c) => c.orgs.invites({ path: { orgId: org.id } }))
  const [email, setEmail] = useState("")
  const [role, setRole] = useState<"owner" | "member">("member")
  const invite = useApiMutation((c) => c.orgs.invite({ path: { orgId: org.id }, payload: { email, role } }), [[
    "invites",
    org.id
  ]])
  const changeRole = useApiMutation(
    (c, change: { userId: UserId; role: "owner" | "member" }) =>
      c.orgs.changeRole({ path: { orgId: org.id, userId: change.userId }, payload: { role: change.role } }),
    [["members", org.id]]
  )
  const remove = useApiMutation((c, userId: UserId) => c.orgs.removeMember({ path: { orgId: org.id, userId } }), [[
    "members",
    org.id
  ]])
  const revokeInvite = useApiMutation(
    (c, inviteId: InviteId) => c.orgs.revokeInvite({ path: { orgId: org.id, inviteId } }),
    [["invites", org.id]]
  )
  const owner = org.role === "owner"
  return (
    <div className="stack">
      <h1>Members</h1>
      <ErrorNotice error={changeRole.error ?? remove.error ?? revokeInvite.error} />
      <Loaded query={members}>
        {(data) => (
          <Table
            rows={data.members}
            head={["Email", "Role", "Joined", ""]}
            row={(m) => (
              <tr key={m.user_id}>
                <td>{m.email}</td>
                <td>
                  {owner
                    ? (
                      <select
                        aria-label={`Role of ${m.email}`}
                        value={m.role}
                        onChange={(e) =>
                          changeRole.mutate({ userId: m.user_id, role: e.target.value as "owner" | "member" })}
                      >
                        <option value="owner">owner</option>
                        <option value="member">member</option>
                      </select>
                    )
                    : <Status value={m.role} />}
                </td>
                <td>
                  <When at={m.joined_at} />
                </td>
                <td>
                  {owner
                    ? (
                      <button
                        type="button"
                        className="danger small"
                        onClick={() => confirm(`Remove ${m.email}?`) && remove.mutate(m.user_id)}
                      >
                        Remove
                      </button>
                    )
                    : null}
                </td>
              </tr>
            )}
          />
        )}
      </Loaded>
      <h2>Invitations</h2>
      {owner
        ? (
          <form
            className="card inline"
            aria-label="Invite"
            onSubmit={(event) => {
              event.preventDefault()
              invite.mutate(undefined, { onSuccess: () => setEmail("") })
            }}
          >
            <label>
              Email
              <input type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
            </label>
            <label>
              Role
              <select value={role} onChange={(e) => setRole(e.target.value as "owner" | "member")}>
                <option value="member">member</option>
                <option value="owner">owner</option>
              </select>
            </label>
            <button type="submit" disabled={invite.isPending}>Invite</button>
            <ErrorNotice error={invite.error} />
          </form>
        )
        : null}
      <Loaded query={invites}>
        {(data) =>
          data.invites.length === 0 ? <p className="muted">No pending invitations.</p> : (
            <ul className="plain">
              {data.invites.map((i) => (
                <li key={i.id}>
                  {i.email} <Status value={i.role} /> until <When at={i.expires_at} /> {owner
                    ? (
                      <button
                        type="button"
                        className="secondary small"
                        onClick={() => revokeInvite.mutate(i.id)}
                      >
                        Revoke
                      </button>
                    )
                    : null}
                </li>
              ))}
            </ul>
          )}
      </Loaded>
    </div>
  )
}
