import { Model } from "@effect/sql"
import { Schema } from "effect"
import { AgentId, ReceiptId } from "./Ids.js"

/**
 * A purchase's idempotency key, declared once: the answer kept per agent and key (the JSON
 * text of a `PurchaseAnswer`, Services/Purchasing/Answers.ts, decoded only when replayed),
 * with a lease while its purchase runs. Never on the wire.
 */
export class IdempotencyKey extends Model.Class<IdempotencyKey>("IdempotencyKey")({
  agent_id: AgentId,
  key: Schema.String,
  /** What the request held, so another request under the key is told apart. */
  fingerprint: Schema.String,
  status: Schema.Literal("in_progress", "done"),
  answer: Schema.NullOr(Schema.String),
  receipt_id: ReceiptId,
  created_at: Schema.DateFromSelf,
  expires_at: Schema.DateFromSelf,
  lease_until: Schema.NullOr(Schema.DateFromSelf)
}) {}
