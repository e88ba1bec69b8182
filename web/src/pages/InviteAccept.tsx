import { useQueryClient } from "@tanstack/react-query"
import { useEffect } from "react"
import { Link, useSearchParams } from "react-router"
import { useApiQuery } from "../api/hooks.js"
import { ErrorNotice, Spinner } from "../components/ui.js"

/**
 * Where an invitation mail lands (after signing in): joins the org the link names. The join
 * is keyed by the invitation's token, so it is sent once however often the page mounts or
 * renders while it is on its way (a second send would find the invitation used).
 */
export const InviteAcceptPage = () => {
  const [search] = useSearchParams()
  const token = search.get("token") ?? ""
  const queryClient = useQueryClient()
  const accept = useApiQuery(
    ["invite-accept", token],
    (c) => c.authSession.acceptInvite({ payload: { token } }),
    { enabled: token !== "", once: true }
  )
  const joined = accept.data !== undefined
  useEffect(() => {
    // The new membership shows in the account's org list.
    if (joined) void queryClient.invalidateQueries({ queryKey: ["me"] })
  }, [joined, queryClient])
  return (
    <div className="stack">
      <h1>Invitation</h1>
      {accept.isLoading ? <Spinner label="Joining" /> : null}
      {accept.data === undefined ? null : (
        <p role="status">
          You joined <Link to={`/orgs/${accept.data.org.id}`}>{accept.data.org.name}</Link>.
        </p>
      )}
      <ErrorNotice error={accept.error} />
    </div>
  )
}
