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
import oauth from "./0022_oauth.js"

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
  "0022_oauth": oauth
}

/** The id of the newest migration: a database below it is not ready for this version. */
export const LATEST_MIGRATION = Math.max(...Object.keys(migrations).map((key) => Number(key.split("_", 1)[0])))
