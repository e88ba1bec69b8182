import foundation from "./0001_foundation.js"
import identity from "./0002_identity.js"
import events from "./0003_events.js"
import ledger from "./0004_ledger.js"
import webhooks from "./0005_webhooks.js"
import purchasing from "./0006_purchasing.js"
import ledgerSignal from "./0007_ledger_signal.js"
import billing from "./0008_billing.js"
import idempotencyLease from "./0009_idempotency_lease.js"
import idempotencyAnswers from "./0010_idempotency_answers.js"
import operations from "./0011_operations.js"
import catalogueInMemory from "./0012_catalogue_in_memory.js"
import paymentDisputes from "./0013_payment_disputes.js"
import agentRefusals from "./0014_agent_refusals.js"
import lowAlertFundedOnly from "./0015_low_alert_funded_only.js"
import oauth from "./0016_oauth.js"
import checkoutSessions from "./0017_checkout_sessions.js"
import signingKeys from "./0018_signing_keys.js"
import webhookSecretRotation from "./0019_webhook_secret_rotation.js"
import webhookReplay from "./0020_webhook_replay.js"
import planSubscriptions from "./0021_plan_subscriptions.js"
import ledgerFunctions from "./0022_ledger_functions.js"
import quotaFunctions from "./0023_quota_functions.js"
import callAndItemFunctions from "./0024_call_and_item_functions.js"
import botAuth from "./0025_bot_auth.js"
import agentRetiredKeys from "./0026_agent_retired_keys.js"
import x402 from "./0027_x402.js"
import dropSandboxTables from "./0028_drop_sandbox_tables.js"

/** Every migration in order; the key's number is its id (see @effect/sql Migrator.fromRecord). */
export const migrations = {
  "0001_foundation": foundation,
  "0002_identity": identity,
  "0003_events": events,
  "0004_ledger": ledger,
  "0005_webhooks": webhooks,
  "0006_purchasing": purchasing,
  "0007_ledger_signal": ledgerSignal,
  "0008_billing": billing,
  "0009_idempotency_lease": idempotencyLease,
  "0010_idempotency_answers": idempotencyAnswers,
  "0011_operations": operations,
  "0012_catalogue_in_memory": catalogueInMemory,
  "0013_payment_disputes": paymentDisputes,
  "0014_agent_refusals": agentRefusals,
  "0015_low_alert_funded_only": lowAlertFundedOnly,
  "0016_oauth": oauth,
  "0017_checkout_sessions": checkoutSessions,
  "0018_signing_keys": signingKeys,
  "0019_webhook_secret_rotation": webhookSecretRotation,
  "0020_webhook_replay": webhookReplay,
  "0021_plan_subscriptions": planSubscriptions,
  "0022_ledger_functions": ledgerFunctions,
  "0023_quota_functions": quotaFunctions,
  "0024_call_and_item_functions": callAndItemFunctions,
  "0025_bot_auth": botAuth,
  "0026_agent_retired_keys": agentRetiredKeys,
  "0027_x402": x402,
  "0028_drop_sandbox_tables": dropSandboxTables
}

/** The id of the newest migration: a database below it is not ready for this version. */
export const LATEST_MIGRATION = Math.max(...Object.keys(migrations).map((key) => Number(key.split("_", 1)[0])))
