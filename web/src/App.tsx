import { Navigate, Route, Routes } from "react-router"
import { isApiError } from "./api/client.js"
import { useApiQuery } from "./api/hooks.js"
import { AccountLayout, OrgLayout } from "./components/Layout.js"
import { ErrorNotice, Spinner } from "./components/ui.js"
import { AccountPage } from "./pages/Account.js"
import { AdminPage } from "./pages/Admin.js"
import { AgentsPage } from "./pages/Agents.js"
import { ApprovalLinkPage } from "./pages/ApprovalLink.js"
import { ApprovalsPage } from "./pages/Approvals.js"
import { BillingPage } from "./pages/Billing.js"
import { CallsPage } from "./pages/Calls.js"
import { CataloguePage } from "./pages/Catalogue.js"
import { InviteAcceptPage } from "./pages/InviteAccept.js"
import { JobsPage } from "./pages/Jobs.js"
import { KeysPage } from "./pages/Keys.js"
import { MembersPage } from "./pages/Members.js"
import { OverviewPage } from "./pages/Overview.js"
import { ReceiptsPage } from "./pages/Receipts.js"
import { SettingsPage } from "./pages/Settings.js"
import { SignInPage } from "./pages/SignIn.js"
import { ToolsPage } from "./pages/Tools.js"
import { WebhooksPage } from "./pages/Webhooks.js"

/** Pages that work without a session: sign-in, the mailed approval links, administrators. */
const publicRoutes = (
  <>
    <Route path="/approve" element={<ApprovalLinkPage />} />
    <Route path="/admin/*" element={<AdminPage />} />
  </>
)

export const App = () => {
  // Asked first so a signed-out browser gets the sign-in page without a refused request.
  const session = useApiQuery(["session"], (c) => c.auth.session())
  const signedIn = session.data?.signed_in === true
  const me = useApiQuery(["me", signedIn], (c) => c.account.me(), { enabled: signedIn })
  if (session.isPending || (signedIn && me.isPending)) {
    return (
      <main id="main" tabIndex={-1} className="center">
        <Spinner label="Opening your dashboard" />
      </main>
    )
  }
  const problem = session.error ?? (isApiError(me.error, "unauthenticated") ? null : me.error)
  if (problem) {
    return (
      <main id="main" tabIndex={-1} className="center">
        <ErrorNotice error={problem} />
      </main>
    )
  }
  if (me.data === undefined) {
    return (
      <Routes>
        {publicRoutes}
        <Route path="*" element={<SignInPage />} />
      </Routes>
    )
  }
  const firstOrg = me.data.orgs[0]
  return (
    <Routes>
      {publicRoutes}
      <Route element={<AccountLayout me={me.data} />}>
        <Route path="/account" element={<AccountPage me={me.data} />} />
        <Route path="/invites/accept" element={<InviteAcceptPage />} />
      </Route>
      <Route path="/orgs/:orgId" element={<OrgLayout me={me.data} />}>
        <Route index element={<OverviewPage />} />
        <Route path="agents" element={<AgentsPage />} />
        <Route path="calls" element={<CallsPage />} />
        <Route path="receipts" element={<ReceiptsPage />} />
        <Route path="receipts/:receiptId" element={<ReceiptsPage />} />
        <Route path="approvals" element={<ApprovalsPage />} />
        <Route path="approvals/:approvalId" element={<ApprovalsPage />} />
        <Route path="jobs" element={<JobsPage />} />
        <Route path="jobs/:receiptId" element={<JobsPage />} />
        <Route path="webhooks" element={<WebhooksPage />} />
        <Route path="keys" element={<KeysPage />} />
        <Route path="members" element={<MembersPage />} />
        <Route path="billing" element={<BillingPage />} />
        <Route path="catalogue" element={<CataloguePage />} />
        <Route path="tools" element={<ToolsPage />} />
        <Route path="settings" element={<SettingsPage />} />
      </Route>
      <Route
        path="*"
        element={<Navigate replace to={firstOrg === undefined ? "/account" : `/orgs/${firstOrg.id}`} />}
      />
    </Routes>
  )
}
