import { useQueryClient } from "@tanstack/react-query"
import { useState } from "react"
import { Link, NavLink, Outlet, useLocation, useNavigate, useParams } from "react-router"
import { api } from "../api/client.js"
import type { MeData } from "../api/types.js"
import { ErrorNotice } from "./ui.js"

const orgPages = [
  ["", "Overview"],
  ["agents", "Agents"],
  ["approvals", "Approvals"],
  ["calls", "Calls"],
  ["receipts", "Receipts"],
  ["jobs", "Jobs"],
  ["webhooks", "Webhooks"],
  ["keys", "Org keys"],
  ["members", "Members"],
  ["billing", "Billing"],
  ["catalogue", "Catalogue"],
  ["tools", "Tools"],
  ["settings", "Settings"]
] as const

const SignOut = () => {
  const queryClient = useQueryClient()
  const [error, setError] = useState<unknown>(null)
  return (
    <>
      <button
        type="button"
        className="secondary"
        onClick={() =>
          api((c) => c.authSession.logout()).then(
            () => queryClient.resetQueries(),
            setError
          )}
      >
        Sign out
      </button>
      <ErrorNotice error={error} />
    </>
  )
}

const Header = ({ me, orgId }: { readonly me: MeData; readonly orgId?: string | undefined }) => {
  const navigate = useNavigate()
  const location = useLocation()
  return (
    <header className="topbar">
      <Link to={orgId === undefined ? "/account" : `/orgs/${orgId}`} className="brand">Agent Gateway</Link>
      {me.orgs.length > 0
        ? (
          <label className="org-switch">
            <span className="visually-hidden">Org</span>
            <select
              value={orgId ?? ""}
              onChange={(event) => {
                const rest = orgId === undefined ? "" : location.pathname.split(`/orgs/${orgId}`)[1] ?? ""
                navigate(`/orgs/${event.target.value}${rest.split("/").slice(0, 2).join("/")}`)
              }}
            >
              {orgId === undefined ? <option value="">Choose an org</option> : null}
              {me.orgs.map((org) => <option key={org.id} value={org.id}>{org.name} ({org.role})</option>)}
            </select>
          </label>
        )
        : null}
      <span className="spacer" />
      <Link to="/account" className="account-link">{me.user.email}</Link>
      <SignOut />
    </header>
  )
}

/** Pages about the person: account, phone, orgs. */
export const AccountLayout = ({ me }: { readonly me: MeData }) => (
  <div className="shell">
    <Header me={me} />
    <main id="main" tabIndex={-1} className="content">
      <Outlet />
    </main>
  </div>
)

/** Pages of one org, with its navigation (a menu button at phone width). */
export const OrgLayout = ({ me }: { readonly me: MeData }) => {
  const { orgId = "" } = useParams()
  const [menuOpen, setMenuOpen] = useState(false)
  const org = me.orgs.find((candidate) => candidate.id === orgId)
  return (
    <div className="shell">
      <Header me={me} orgId={orgId} />
      <div className="with-nav">
        <nav className={`sidenav${menuOpen ? " open" : ""}`} aria-label="Org pages">
          <button
            type="button"
            className="menu-toggle secondary"
            aria-expanded={menuOpen}
            onClick={() => setMenuOpen(!menuOpen)}
          >
            Menu
          </button>
          <ul>
            {orgPages.map(([path, label]) => (
              <li key={path}>
                <NavLink
                  end={path === ""}
                  to={`/orgs/${orgId}${path === "" ? "" : `/${path}`}`}
                  onClick={() => setMenuOpen(false)}
                >
                  {label}
                </NavLink>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main" tabIndex={-1} className="content">
          {org === undefined
            ? <ErrorNotice error={new Error("You are not a member of this org.")} />
            : <Outlet context={org} />}
        </main>
      </div>
    </div>
  )
}
