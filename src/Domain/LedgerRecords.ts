import { Model } from "@effect/sql"
import { Schema } from "effect"
import { AgentId, HoldId, LedgerEntryId, OrgId } from "./Ids.js"

/**
 * The ledger's records. Neither is on the wire (balances and spend are, as amounts), so
 * only their row variants are used: credits `bigint`, timestamps Dates, ids branded.
 */

/**
 * A hold, as read back (a refund, a sweep, the reason a settlement was refused). Holds are
 * written only by the hot path's hold statement (`LedgerRepo`), never through `.insert`, so
 * only the select variant is used.
 */
export class LedgerHold extends Model.Class<LedgerHold>("LedgerHold")({
  id: HoldId,
  org_id: OrgId,
  agent_id: AgentId,
  amount: Schema.BigInt,
  /** What the hold pays for, e.g. "gateway_call". */
  purpose: Schema.String,
  reference: Schema.String,
  test_mode: Schema.Boolean,
  /** The agent's budget month, `YYYY-MM-DD` (its first day): read with `to_char`. */
  month: Schema.String,
  status: Schema.Literal("held", "captured", "released"),
  captured: Schema.BigInt,
  refunded: Schema.BigInt,
  created_at: Schema.DateFromSelf,
  expires_at: Schema.DateFromSelf
}) {}

export const EntryKind = Schema.Literal(
  "trial_grant",
  "top_up",
  "hold",
  "capture",
  "release",
  "refund",
  "adjustment",
  "trial_expiry"
)
export type EntryKind = typeof EntryKind.Type

/**
 * An append-only entry. `LedgerEntry.insert` is what the ledger's own statements write
 * outside the hot path (credits, refunds, trials); holds and settlements write theirs in
 * their single statements.
 */
export class LedgerEntry extends Model.Class<LedgerEntry>("LedgerEntry")({
  id: Model.GeneratedByApp(LedgerEntryId),
  /** The order of writing, per database. */
  seq: Model.Generated(Schema.BigInt),
  org_id: OrgId,
  kind: EntryKind,
  /** The signed change to the balance (negative for a debit). */
  amount: Schema.BigInt,
  /** The credits concerned, never negative. */
  credits: Schema.BigInt,
  hold_id: Schema.NullOr(HoldId),
  agent_id: Schema.NullOr(AgentId),
  note: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf
}) {}
