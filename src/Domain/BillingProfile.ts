import { Model } from "@effect/sql"
import { Schema } from "effect"
import { OrgId } from "./Ids.js"

/**
 * An org's billing profile: the provider's customer, the saved card, auto-reload and the
 * paid plan's period. Made empty with the org's first billing action and changed by partial
 * updates (`ProfileChanges` in BillingRepo), so only its row (select) variant is used. It is
 * not a wire record: the summary and the auto-reload settings are computed from it (and
 * answer defaults for an org without one).
 */
export class BillingProfile extends Model.Class<BillingProfile>("BillingProfile")({
  org_id: OrgId,
  customer_id: Schema.NullOr(Schema.String),
  card_payment_method_id: Schema.NullOr(Schema.String),
  card_brand: Schema.NullOr(Schema.String),
  card_last4: Schema.NullOr(Schema.String),
  card_exp_month: Schema.NullOr(Schema.Number),
  card_exp_year: Schema.NullOr(Schema.Number),
  auto_reload_enabled: Schema.Boolean,
  auto_reload_threshold_credits: Schema.NullOr(Schema.BigInt),
  auto_reload_amount_credits: Schema.NullOr(Schema.BigInt),
  auto_reload_monthly_limit_credits: Schema.NullOr(Schema.BigInt),
  auto_reload_failures: Schema.Number,
  auto_reload_next_attempt_at: Schema.NullOr(Schema.DateFromSelf),
  auto_reload_disabled_reason: Schema.NullOr(Schema.String),
  plan_period_end: Schema.NullOr(Schema.DateFromSelf),
  plan_founding: Schema.Boolean,
  /** The card setup (a checkout session saving a card) the owner was last sent to. */
  card_setup_session_id: Schema.NullOr(Schema.String),
  /** The provider's subscription the org's paid plan follows. */
  subscription_id: Schema.NullOr(Schema.String),
  updated_at: Schema.DateFromSelf
}) {}
