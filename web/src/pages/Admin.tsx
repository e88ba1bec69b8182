import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query"
import type { Effect } from "effect"
import { useState } from "react"
import { apiWithToken, type Client } from "../api/client.js"
import { Credits, Empty, ErrorNotice, Loaded, Status, When } from "../components/ui.js"

/** An administrator's session lives in this page's memory only: a reload signs out. */
const useAdminApi = (token: string) => <A, E>(call: (client: Client) => Effect.Effect<A, E>) =>
  apiWithToken(token, call)

const SignIn = ({ onSignedIn }: { readonly onSignedIn: (token: string, email: string) => void }) => {
  const [form, setForm] = useState({ email: "", password: "", code: "" })
  const signIn = useMutation({
    mutationFn: () => apiWithToken("", (c) => c.adminSignIn.signIn({ payload: form })),
    onSuccess: (answer) => onSignedIn(answer.session_token, answer.admin.email)
  })
  return (
    <form
      className="card stack narrow"
      aria-label="Administrator sign-in"
      onSubmit={(event) => {
        event.preventDefault()
        signIn.mutate()
      }}
    >
      <h1>Administrators</h1>
      <label>
        Email<input
          type="email"
          required
          autoComplete="username"
          value={form.email}
          onChange={(e) => setForm({ ...form, email: e.target.value })}
        />
      </label>
      <label>
        Password<input
          type="password"
          required
          autoComplete="current-password"
          value={form.password}
          onChange={(e) => setForm({ ...form, password: e.target.value })}
        />
      </label>
      <label>
        Code<input
          inputMode="numeric"
          required
          autoComplete="one-time-code"
          value={form.code}
          onChange={(e) => setForm({ ...form, code: e.target.value })}
        />
      </label>
      <button type="submit" disabled={signIn.isPending}>Sign in</button>
      <ErrorNotice error={signIn.error} />
    </form>
  )
}

const DisputeQueue = ({ token }: { readonly token: string }) => {
  const call = useAdminApi(token)
  const queryClient = useQueryClient()
  const [status, setStatus] = useState<"open" | "upheld" | "rejected">("open")
  const [reasons, setReasons] = useState<Record<string, string>>({})
  const disputes = useQuery({
    queryKey: ["admin-disputes", status],
    queryFn: () => call((c) => c.adminDisputes.list({ urlParams: { status, limit: 50 } }))
  })
  const decide = useMutation({
    mutationFn: (d: { id: string; decision: "upheld" | "rejected" }) =>
      call((c) =>
        c.adminDisputes.decide({ path: { id: d.id }, payload: { decision: d.decision, reason: reasons[d.id] ?? "" } })
      ),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["admin-disputes"] })
  })
  return (
    <section className="stack">
      <h2>Disputes</h2>
      <label>
        Show
        <select value={status} onChange={(e) => setStatus(e.target.value as typeof status)}>
          <option value="open">open (oldest first)</option>
          <option value="upheld">upheld</option>
          <option value="rejected">rejected</option>
        </select>
      </label>
      <ErrorNotice error={decide.error} />
      <Loaded query={disputes}>
        {(data) =>
          data.disputes.length === 0 ? <Empty>No {status} disputes.</Empty> : (
            <ul className="plain stack">
              {data.disputes.map((d) => (
                <li key={d.id} className="card">
                  <p>
                    <Status value={d.status} /> Item {d.item_index} of receipt <code>{d.receipt_id}</code>, cost{" "}
                    <Credits amount={d.item_cost} />, opened <When at={d.created_at} />
                  </p>
                  <p>{d.reason ?? <span className="muted">No reason given.</span>}</p>
                  {d.status === "open"
                    ? (
                      <div className="inline">
                        <label>
                          Reason for the decision<input
                            value={reasons[d.id] ?? ""}
                            onChange={(e) => setReasons({ ...reasons, [d.id]: e.target.value })}
                          />
                        </label>
                        <button type="button" onClick={() => decide.mutate({ id: d.id, decision: "upheld" })}>
                          Uphold (refund)
                        </button>
                        <button
                          type="button"
                          className="danger"
                          onClick={() => decide.mutate({ id: d.id, decision: "rejected" })}
                        >
                          Reject
                        </button>
                      </div>
                    )
                    : (
                      <p className="muted">
                        {d.note} Refund <Credits amount={d.refund} />.
                      </p>
                    )}
                </li>
              ))}
            </ul>
          )}
      </Loaded>
    </section>
  )
}

/** Administrators: sign in, then the dispute queue (the first of their pages). */
export const AdminPage = () => {
  const [session, setSession] = useState<{ token: string; email: string } | null>(null)
  if (session === null) {
    return (
      <main className="center">
        <SignIn onSignedIn={(token, email) => setSession({ token, email })} />
      </main>
    )
  }
  return (
    <div className="shell">
      <header className="topbar">
        <span className="brand">Agent Gateway · administrators</span>
        <span className="spacer" />
        <span>{session.email}</span>
        <button
          type="button"
          className="secondary"
          onClick={() => apiWithToken(session.token, (c) => c.adminSession.signOut()).finally(() => setSession(null))}
        >
          Sign out
        </button>
      </header>
      <main className="content">
        <DisputeQueue token={session.token} />
      </main>
    </div>
  )
}
