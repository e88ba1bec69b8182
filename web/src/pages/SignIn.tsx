import { useState } from "react"
import { useLocation } from "react-router"
import { api } from "../api/client.js"
import { useApiQuery } from "../api/hooks.js"
import { ErrorNotice, Spinner } from "../components/ui.js"

/** Sign in by an emailed link (it lands back here), or with the identity provider when configured. */
export const SignInPage = () => {
  const [email, setEmail] = useState("")
  const [state, setState] = useState<"idle" | "sending" | "sent">("idle")
  const [error, setError] = useState<unknown>(null)
  const options = useApiQuery(["auth-options"], (c) => c.auth.options())
  // The page asked for (an invitation link, say) is where the mailed link will land.
  const location = useLocation()
  const next = location.pathname === "/" ? undefined : `${location.pathname}${location.search}`
  const invited = location.pathname.startsWith("/invites/accept")
  return (
    <main id="main" tabIndex={-1} className="center">
      <div className="card narrow stack sign-in">
        <h1>Sign in</h1>
        <p>Run your org's agents, budgets, approvals and money.</p>
        {invited
          ? (
            <p className="notice">
              You were invited to an org. Sign in with the invited address, then open the invitation link again to join.
            </p>
          )
          : null}
        {state === "sent"
          ? (
            <div className="notice" role="status">
              <h2>Check your mail</h2>
              <p>
                We sent a sign-in link to <b>{email}</b>. It works once, for 15 minutes.
              </p>
              <button type="button" className="link" onClick={() => setState("idle")}>Use another address</button>
            </div>
          )
          : (
            <form
              onSubmit={(event) => {
                event.preventDefault()
                setState("sending")
                setError(null)
                api((c) => c.auth.emailStart({ payload: { email, next } })).then(
                  () => setState("sent"),
                  (failure) => {
                    setError(failure)
                    setState("idle")
                  }
                )
              }}
            >
              <label>
                Email
                <input
                  type="email"
                  required
                  autoComplete="email"
                  value={email}
                  onChange={(e) => setEmail(e.target.value)}
                />
              </label>
              <button type="submit" disabled={state === "sending"}>
                {state === "sending" ? "Sending…" : "Email me a sign-in link"}
              </button>
              <ErrorNotice error={error} />
            </form>
          )}
        {options.isPending ? <Spinner /> : null}
        {options.data?.identity_provider === true
          ? (
            <p>
              <a className="button secondary" href="/auth/idp/start">Sign in with your identity provider</a>
            </p>
          )
          : null}
      </div>
    </main>
  )
}
