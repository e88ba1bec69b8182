/**
 * The summary and description of every operation in the OpenAPI document, by operation id
 * (`group.endpoint`). Generated clients and the `/docs` page show them; the lint test fails
 * when an operation has none. An endpoint's own `OpenApi.Description`, where it has one,
 * wins over the description here.
 */
export interface OperationDoc {
  readonly summary: string
  readonly description?: string
}

const doc = (summary: string, description: string): OperationDoc => ({ summary, description })
/** For endpoints that carry their own description. */
const summary = (text: string): OperationDoc => ({ summary: text })

export const operationDocs: Record<string, OperationDoc> = {
  "public.tools": doc(
    "List tools",
    "Every tool with its task type, price per success and whether it can be bought now."
  ),
  "public.scores": doc(
    "Tool scores",
    "Measured quality per tool (accuracy, coverage, latency), optionally for one task type."
  ),
  "public.taskTypes": doc(
    "List task types",
    "The seven task types, with their input and output fields and the published check."
  ),
  "public.pricing": doc(
    "Plans and prices",
    "The plans with their fees, allowances and limits, and the price of a credit."
  ),
  "public.formula": doc("Recommendation formula", "How recommend ranks tools: the published weights and terms."),
  "public.reports": doc(
    "Benchmark reports",
    "The latest benchmark report of each tool, with sample size and check version."
  ),
  "public.status": doc(
    "Service status",
    "Whether the service and its parts are up, with the rate-limit store's state."
  ),
  "public.endpoints": summary("Gateway endpoint catalogue"),
  "waitlist.join": doc(
    "Join the waitlist",
    "Leaves an email address for an invitation; answers the same whether or not it was new."
  ),
  "docs.errors": doc(
    "Error code page",
    "An HTML page listing every error code with its status, meaning and retry rule."
  ),
  "docs.webhookEventSchema": doc("Webhook event schema", "The JSON Schema of the body of every webhook delivery."),
  "signingKeys.jwks": doc(
    "Receipt signing keys",
    "The Ed25519 public keys (JWK Set) that check the `signature` of receipts, gateway calls and disputes. " +
      "Keys rotate; an older key stays listed so what it signed can still be checked."
  ),
  "webhooks.create": doc(
    "Add a webhook endpoint",
    "Registers an HTTPS address for the chosen event types; the signing secret is shown once."
  ),
  "webhooks.list": doc(
    "List webhook endpoints",
    "The org's webhook endpoints with their event types (never the secret)."
  ),
  "webhooks.remove": doc("Remove a webhook endpoint", "Stops deliveries to the endpoint; pending ones are dropped."),
  "webhooks.replay": doc(
    "Replay webhook deliveries",
    "Resends one event (`event_id`), or every event of the endpoint since a time (`since`, `only_failed`), with " +
      "the same event ids, so receivers drop what they already have. Owners; 20 replays an hour per org."
  ),
  "webhooks.rotateSecret": doc(
    "Rotate a webhook endpoint's secret",
    "Makes a new signing secret, shown once. For 24 hours deliveries are signed with both the new and the " +
      "previous secret (in `Service-Signature` and in the Standard Webhooks `webhook-signature`)."
  ),
  "webhooks.test": doc(
    "Send a test event",
    "Delivers a `webhook.test` event to the endpoint now and answers the delivery's result."
  ),
  "webhooks.deliveries": doc(
    "List webhook deliveries",
    "Deliveries newest first, with status, attempts and next try; filter by endpoint and status."
  ),
  "events.list": doc("List events", "The org's events newest first, whether or not a webhook endpoint received them."),
  "events.notifications": doc("Notification settings", "The low-balance alert threshold of the org."),
  "events.setNotifications": doc(
    "Change notification settings",
    "Sets the low-balance alert threshold (USD, at most three decimals)."
  ),
  "auth.options": summary("Ways to sign in"),
  "auth.session": summary("Am I signed in?"),
  "auth.emailStart": summary("Start email sign-in"),
  "auth.emailVerifyLink": summary("Open a sign-in link"),
  "auth.emailVerify": summary("Spend a sign-in token"),
  "auth.idpStart": summary("Start identity-provider sign-in"),
  "auth.idpCallback": summary("Finish identity-provider sign-in"),
  "authSession.logout": doc("Sign out", "Ends the current session and clears its cookie."),
  "authSession.acceptInvite": doc(
    "Accept an invitation",
    "Joins the org of an invitation mailed to the signed-in address."
  ),
  "account.me": doc("Current user", "The signed-in person with their orgs and roles."),
  "account.startPhone": summary("Verify a phone: send a code"),
  "account.verifyPhone": doc(
    "Verify a phone: check the code",
    "Checks the texted code; a phone verifies one account only."
  ),
  "account.createOrg": summary("Create an org"),
  "orgs.get": doc("Get an org", "The org's name, slug, plan, balance and trial."),
  "orgs.members": doc("List members", "Members with their roles."),
  "orgs.changeRole": summary("Change a member's role"),
  "orgs.removeMember": summary("Remove a member"),
  "orgs.invite": summary("Invite a person"),
  "orgs.invites": doc("List invitations", "Pending invitations with their expiry."),
  "orgs.revokeInvite": doc("Revoke an invitation", "The mailed link stops working and the seat is free again."),
  "orgs.requestDeletion": summary("Request data deletion"),
  "orgs.deletionRequests": doc("List deletion requests", "The org's data-deletion requests and their state."),
  "orgs.requestOpening": summary("Ask for an endpoint to be opened"),
  "account.myDeletionRequests": summary("Your data-deletion requests"),
  "orgs.openings": doc(
    "Endpoint openings",
    "The on-request endpoints open for this org, and its requests with their state."
  ),
  "agents.create": doc(
    "Create an agent",
    "A new agent with its budget, approval threshold and IP allowlist; its key is shown once."
  ),
  "agents.list": doc("List agents", "The org's agents with mode, status, budget and month-to-date spend, paginated."),
  "agents.get": doc("Get an agent", "One agent with its settings and month-to-date spend."),
  "agents.update": doc(
    "Change an agent",
    "Edits name, budget, approval threshold, IP allowlist, or disables and enables it."
  ),
  "agents.rotateKey": doc("Rotate an agent's key", "Issues a new key (shown once); the old one stops working at once."),
  "agents.revokeKey": doc("Revoke an agent's key", "The key stops working at once; the agent keeps its history."),
  "agentSelf.agent": doc("The calling agent", "The agent the key belongs to: mode, budget, spend and limits."),
  "orgKeys.create": doc(
    "Create an org key",
    "A key for scripts acting on the org, with a read or write scope; shown once."
  ),
  "agentConnections.list": doc(
    "List an agent's connected MCP clients",
    "The MCP clients an owner connected to this agent by OAuth, newest first, with who consented, when they last reached /mcp, and when they were revoked."
  ),
  "agentConnections.revoke": doc(
    "Disconnect an MCP client",
    "Revokes the client's grant: its access and refresh tokens stop working at once."
  ),
  "orgKeys.list": doc("List org keys", "The org's keys with scope, maker and last use (never the secret)."),
  "orgKeys.revoke": doc("Revoke an org key", "The key stops working at once."),
  "adminSignIn.signIn": summary("Administrator sign-in"),
  "adminSession.me": doc("Current administrator", "The administrator the session belongs to."),
  "adminSession.signOut": doc("Administrator sign-out", "Ends the administrator session."),
  "gateway.call": doc(
    "Call a provider endpoint",
    "Calls one catalogue endpoint with the agent's credits: held before the call, settled after it, refunded when the provider fails. A test key checks and prices the call without making it and answers the endpoint's sandbox sample."
  ),
  "gateway.balance": doc("Agent balance", "The org's balance and the agent's budget left this month."),
  "gatewayCalls.list": doc(
    "List gateway calls",
    "The org's gateway calls newest first, with endpoint, status, charge and latency."
  ),
  "gatewayProviders.list": doc(
    "List providers",
    "The gateway's providers with their endpoint counts and availability."
  ),
  "purchasing.recommend": doc(
    "Recommend tools",
    "Ranks the tools of a task type by measured quality and price, before buying. Give `task_type` or describe the task in free text as `task`; each tool says whether it can be bought now (`purchasable`)."
  ),
  "purchasing.execute": doc(
    "Buy results",
    "Runs a tool (its id or slug from recommend) on 1 to 1,000 inputs, each an object of the tool's input fields; only results that pass the published check are charged. Up to 25 inputs answer at once; more answer a job (`status: queued`) to follow. `max_price` caps the cost; `idempotency_key` makes a retry safe. An amount over the agent's approval threshold answers `approval_required`: retry with its `approval_id` once an owner approved."
  ),
  "purchasing.job": doc("Get a job", "A job's progress and, when done, its items and receipt."),
  "purchasing.receipts": doc(
    "List receipts",
    "The org's purchase receipts, newest first, with what each charged; page with `starting_after`."
  ),
  "purchasing.receipt": doc("Get a receipt", "One receipt with its items, checks and charges."),
  "purchasing.openDispute": doc(
    "Dispute a charged item",
    "Asks for a refund of a charged item (passed or partial) whose result was wrong, within 7 days: the receipt id, the item's index and why. An administrator decides; an upheld dispute refunds the item."
  ),
  "purchasing.dispute": doc(
    "Get a dispute",
    "A dispute's status (open, upheld, rejected), the administrator's decision and note, and the refund."
  ),
  "purchasing.approval": doc(
    "Get an approval",
    "An approval's status (waiting, approved, rejected, expired), the tool and amount it is locked to, and when it expires; retry the purchase with its id once approved."
  ),
  "orgPurchasing.approvals": doc("List approvals", "The org's approvals, the waiting ones first; filter by status."),
  "orgPurchasing.approval": doc("Get an approval", "One approval with tool, amount, reason and expiry."),
  "orgPurchasing.approve": doc(
    "Approve a purchase",
    "Runs the waiting purchase; an optional note is kept with the decision."
  ),
  "orgPurchasing.reject": doc(
    "Reject a purchase",
    "The purchase is not made; an optional note is kept with the decision."
  ),
  "orgPurchasing.receipts": doc("List the org's receipts", "Receipts of every agent of the org, newest first."),
  "orgPurchasing.receipt": doc("Get one of the org's receipts", "One receipt with its items, checks and charges."),
  "orgPurchasing.receiptItems": doc(
    "List a receipt's items with inputs and results",
    "The receipt's items in index order, each with the input the agent sent and its result (charged items, kept 30 days). Not signed: the signed receipt holds their hashes. Page with `starting_after` (the last index seen)."
  ),
  "orgPurchasing.openDispute": doc(
    "Dispute a charged item",
    "Disputes a passed or partial item of one of the org's receipts within 7 days; an administrator decides."
  ),
  "orgPurchasing.disputes": doc("List the org's disputes", "The org's disputes, oldest first; filter by status."),
  "approvalLinks.preview": doc(
    "Read an approval link",
    "The approval behind a one-click link and the decision the link makes, as JSON (the dashboard's page)."
  ),
  "approvalLinks.decision": doc(
    "Use an approval link",
    "Makes the link's decision (once) and answers the decided approval, as JSON."
  ),
  "approvalLinks.show": doc("Open an approval link", "The approval behind a one-click link from the approval mail."),
  "approvalLinks.decide": doc(
    "Decide through an approval link",
    "Approves or rejects the purchase of a one-click link."
  ),
  "adminDisputes.list": doc("List disputes", "Disputes for administrators to decide; filter by status."),
  "adminDisputes.decide": doc("Decide a dispute", "Upholds (refunds the item) or rejects a dispute, with a note."),
  "billing.summary": summary("Billing summary"),
  "billing.payments": summary("List payments"),
  "billing.payment": doc("Get a payment", "One payment with its state and the credits it brought."),
  "billing.topUp": summary("Top up credits"),
  "billing.checkout": summary("Buy credits on the checkout page"),
  "billing.cancel": summary("Cancel an unpaid payment"),
  "billing.confirm": summary("Confirm a payment"),
  "billing.autoReload": doc("Auto-reload settings", "Whether the saved card is charged when the balance runs low."),
  "billing.setAutoReload": summary("Change auto-reload"),
  "billing.removeCard": summary("Forget the saved card"),
  "billing.cardSetup": summary("Save a card on the checkout page"),
  "billing.cardSetupConfirm": summary("Finish saving a card"),
  "billing.changePlan": summary("Change plan"),
  "paymentWebhook.receive": summary("Payment provider events"),
  "sandboxPayments.confirm": summary("Pay in the sandbox"),
  "adminBilling.unfreeze": summary("Unfreeze an org's credits"),
  "adminTools.list": doc(
    "List tools (administrators)",
    "Every tool, unpublished ones included, with its gates, adapter check, scheduled price and pause reason."
  ),
  "adminTools.create": summary("Create a tool"),
  "adminTools.update": doc("Edit a tool", "Changes the descriptive fields, resale rights, adapter endpoint or check."),
  "adminTools.publish": summary("Publish a tool"),
  "adminTools.pause": summary("Pause a tool"),
  "adminTools.resume": summary("Resume a tool"),
  "adminTools.price": summary("Change a tool's price"),
  "adminTools.checkAdapter": doc(
    "Check a tool's adapter",
    "Runs the health check of the tool's provider connection now and keeps the result."
  ),
  "adminTools.benchmark": summary("Start a benchmark run"),
  "adminTools.benchmarks": doc("A tool's benchmark runs", "The tool's runs, newest first, with progress and results."),
  "adminTools.benchmarkRun": doc("A benchmark run", "Status, progress and, once done, the measured results."),
  "adminTools.sampleSets": doc("Sample sets", "The labelled sample sets benchmark runs use, by task type."),
  "adminOrgs.adjust": summary("Adjust an org's credits"),
  "adminOrgs.freeze": summary("Freeze an org's credits"),
  "adminOrgs.plan": doc("Change an org's plan", "Moves the org to another plan without a payment, with a reason."),
  "adminOrgs.openEndpoint": summary("Open an endpoint for an org"),
  "adminOrgs.closeEndpoint": doc(
    "Close an endpoint for an org",
    "The org's agents get 409 endpoint_on_request again."
  ),
  "adminOrgs.deletionRequests": doc(
    "Queue of data-deletion requests",
    "Orgs' data-deletion requests, oldest first; filter by status."
  ),
  "adminOrgs.carryOutDeletion": summary("Carry out a data-deletion request"),
  "adminGateway.switch": summary("Switch the gateway on or off"),
  "adminGateway.providerCap": doc(
    "Change a provider's daily call cap",
    "Each org's daily calls to the provider are capped at this number (429 provider_quota)."
  ),
  "adminGateway.openingRequests": doc(
    "Queue of opening requests",
    "Orgs' requests to open on-request endpoints, oldest first; filter by status."
  ),
  "adminGateway.declineOpening": doc("Decline an opening request", "Declines a pending request with a written reason."),
  "adminAudit.list": summary("Read the audit log"),
  "usage.get": doc(
    "Org balance and usage",
    "Balance, trial and its hourly limit, frozen state, spend per agent and per day, test activity apart from spend, the agents' refusals per day and code, and the top endpoints and tools by spend over a date range (default: this month)."
  ),
  "usage.export": doc(
    "Export calls, receipts, ledger or usage",
    "The org's gateway calls, receipt items (with input and result where kept), ledger entries or daily usage over a range of UTC days (default: this month), as CSV or JSON Lines, streamed as the rows are read."
  ),
  "health.live": doc("Liveness probe", "Answers while the process serves at all."),
  "health.ready": doc(
    "Readiness probe",
    "Answers 200 only while this replica takes new requests: database reachable, migrations applied, not draining."
  )
}
