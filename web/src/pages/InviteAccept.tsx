import { useEffect } from "react"
import { Link, useSearchParams } from "react-router"
import { useApiMutation } from "../api/hooks.js"
import { ErrorNotice, Spinner } from "../components/ui.js"

/** Where an invitation mail lands (after signing in): joins the org the link names. */
export const InviteAcceptPage = () => {
  const [search] = useSearchParams()
  const token = search.get("token") ?? ""
  const accept = useApiMutation((c) => c.authSession.acceptInvite({ payload: { token } }), [["me"]])
  const { mutate, isIdle } = accept
  useEffect(() => {
    if (isIdle && token !== "") mutate(undefined)
  }, [isIdle, mutate, token])
  return (
    <div className="stack">
      <h1>Invitation</h1>
      {accept.isPending ? <Spinner label="Joining" /> : null}
      {accept.data === undefined ? null : (
        <p role="status">
          You joined <Link to={`/orgs/${accept.data.org.id}`}>{accept.data.org.name}</Link>.
        </p>
      )}
      <ErrorNotice error={accept.error} />
    </div>
  )
}
