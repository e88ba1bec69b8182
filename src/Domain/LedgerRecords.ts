import { Model } from "@effect/sql"
import { Schema } from "effect"
import { AgentId, HoldId, LedgerEntryId, OrgId } from "./Ids.js"

/**
 * The ledger's records. None is on the wire (balances and spend are, as amounts), so only
 * their row variants are used: credits `bigint`, timestamps Dates, ids branded.
 */

/**
 * A hold, as read back (a refund, a sweep, the reason a settlement was refused). Holds are
 * written only by the ledger's hold function (migration 0022, called by `LedgerRepo`), never
 * through `.insert`, so only the select variant is used.
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
 * the ledger's functions (migration 0022).
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

/**
 * An org's credits: its balance (held credits already taken out), whether they are frozen,
 * whether it was ever funded (until then the trial's hourly window applies) and its
 * low-balance alert, armed again by each top-up. Written by the ledger only.
 */
export class OrgBalance extends Model.Class<OrgBalance>("OrgBalance")({
  org_id: OrgId,
  balance: Schema.BigInt,
  frozen: Schema.Boolean,
  funded: Schema.Boolean,
  low_alert_armed: Schema.Boolean,
  /** The trial's hourly window: its start and what it spent. */
  trial_window_start: Schema.NullOr(Schema.DateFromSelf),
  trial_window_spent: Schema.BigInt,
  updated_at: Schema.DateFromSelf
}) {}

/** An agent's calendar month (UTC): what it spent and still holds against its budget. */
export class AgentMonthSpend extends Model.Class<AgentMonthSpend>("AgentMonthSpend")({
  agent_id: AgentId,
  /** The month's first day, `YYYY-MM-DD`: read with `to_char`. */
  month: Schema.String,
  org_id: OrgId,
  spent: Schema.BigInt,
  held: Schema.BigInt,
  /** The 80% budget alert was sent for this month. */
  alerted_80pct: Schema.Boolean
}) {}
