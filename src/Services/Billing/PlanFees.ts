import { parseDecimal } from "../../Domain/Billing.js"
import { foundingOffer, plans } from "../../Domain/Plans.js"

/** A plan's monthly fee (a decimal USD string of the plans table) in cents. */
export const feeCents = (usd: string) => {
  const d = parseDecimal(usd)!
  return d.scale >= 2 ? d.units / 10n ** BigInt(d.scale - 2) : d.units * 10n ** BigInt(2 - d.scale)
}

/** The monthly fee of a paid plan, at the founding fee for an org holding a founding seat. */
export const planFeeCents = (plan: "pro" | "max", founding: boolean) =>
  feeCents(founding ? foundingOffer.monthly_fee_usd : plans[plan].monthly_fee_usd)
