import { useMutation } from "@tanstack/react-query"
import { useState } from "react"
import { Navigate, NavLink, Route, Routes } from "react-router"
import { apiWithToken } from "../api/client.js"
import { ErrorNotice } from "../components/ui.js"
import { AdminSession } from "./admin/adminApi.js"
import { AuditPage } from "./admin/Audit.js"
import { DeletionsPage } from "./admin/Deletions.js"
import { DisputesPage } from "./admin/Disputes.js"
import { ToolsAdminPage } from "./admin/Tools.js"

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
        Email
        <input
          type="email"
          required
          autoComplete="username"
          value={form.email}
          onChange={(e) => setForm({ ...form, email: e.target.value })}
        />
      </label>
      <label>
        Password
        <input
          type="password"
          required
          autoComplete="current-password"
          value={form.password}
          onChange={(e) => setForm({ ...form, password: e.target.value })}
        />
      </label>
      <label>
        Code
        <input
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

const pages = [["disputes", "Disputes"], ["tools", "Tools"], ["deletions", "Deletion requests"], [
  "audit",
  "Audit log"
]] as const

/** Administrators: sign in, then the dispute queue first, tools, deletion requests, the audit log. */
export const AdminPage = () => {
  const [session, setSession] = useState<{ token: string; email: string } | null>(null)
  if (session === null) {
    return (
      <main id="main" tabIndex={-1} className="center">
        <SignIn onSignedIn={(token, email) => setSession({ token, email })} />
      </main>
    )
  }
  return (
    <AdminSession.Provider value={session}>
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
        <div className="with-nav">
          <nav className="sidenav open" aria-label="Administrator pages">
            <ul>
              {pages.map(([path, label]) => (
                <li key={path}>
                  <NavLink to={`/admin/${path}`}>{label}</NavLink>
                </li>
              ))}
            </ul>
          </nav>
          <main id="main" tabIndex={-1} className="content">
            <Routes>
              <Route path="disputes" element={<DisputesPage />} />
              <Route path="tools" element={<ToolsAdminPage />} />
              <Route path="deletions" element={<DeletionsPage />} />
              <Route path="audit" element={<AuditPage />} />
              <Route path="*" element={<Navigate replace to="/admin/disputes" />} />
            </Routes>
          </main>
        </div>
      </div>
    </AdminSession.Provider>
  )
}
