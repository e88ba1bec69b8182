import type { OrgId } from "@agent-gateway/contract/Domain/Ids.js"
import { useRef, useState } from "react"
import { useApiMutation, useApiQuery } from "../../api/hooks.js"
import { dollars, ownerText } from "../format.js"
import { TableFrame } from "../TableFrame.js"
import { ErrorNotice, Loaded } from "../ui.js"

type PlanId = "payg" | "pro" | "max"

interface Choice {
  readonly plan: PlanId
  readonly founding: boolean
}

const order: Record<PlanId, number> = { payg: 0, pro: 1, max: 2 }

const limitText = (value: number | null) => value === null ? "No fixed limit" : value.toLocaleString("en-US")

/**
 * The plans side by side (monthly fee, daily tool recommendations, agents, seats, webhook endpoints, the
 * price of calls), the founding offer's seats left, and a confirmation step that names the
 * amount before anything is charged and says what a downgrade changes before it happens.
 * Subscribing sends the owner to the payment page; moving between paid plans charges the
 * difference for the rest of the month; Pay as you go ends the subscription at once.
 */
export const PlanChooser = ({ orgId, current, founding, offerClaim, hasSubscription }: {
  readonly orgId: OrgId
  readonly current: PlanId
  /** The org holds a founding seat (Pro is at the founding fee for it). */
  readonly founding: boolean
  /** The org's claim on the founding offer (once per org): used, or its checkout under way. */
  readonly offerClaim: "used" | "under_way" | null
  readonly hasSubscription: boolean
}) => {
  const pricing = useApiQuery(["pricing"], (c) => c.public.pricing())
  const [choice, setChoice] = useState<Choice | null>(null)
  const key = useRef<{ choice: string; key: string } | null>(null)
  const change = useApiMutation(
    (c, picked: Choice) => {
      const text = JSON.stringify(picked)
      if (key.current?.choice !== text) key.current = { choice: text, key: crypto.randomUUID() }
      return c.billing.changePlan({
        path: { orgId },
        payload: {
          plan: picked.plan,
          offer: picked.founding ? "founding-pro" : null,
          idempotency_key: key.current.key
        }
      })
    },
    [["billing", orgId], ["pricing"]]
  )
  const leaving = change.isSuccess && change.data.checkout_url !== null

  return (
    <section className="card stack" aria-labelledby="plans-heading">
      <h2 id="plans-heading">Plans</h2>
      <Loaded query={pricing}>
        {(data) => {
          const offer = data.founding_offer
          const feeOf = (plan: PlanId, withOffer: boolean) =>
            withOffer || (plan === "pro" && founding)
              ? offer.monthly_fee_usd
              : data.plans.find((p) => p.id === plan)!.monthly_fee_usd
          const terms = (plan: PlanId) => data.plans.find((p) => p.id === plan)!
          const confirmText = (picked: Choice) => {
            const fee = dollars(feeOf(picked.plan, picked.founding))
            const name = picked.founding ? offer.name : terms(picked.plan).name
            if (picked.plan === "payg") {
              const now = terms(current)
              const payg = terms("payg")
              return `Move to Pay as you go now. Your ${now.name} subscription ends today and is not renewed. ` +
                `Limits drop at once to ${payg.max_active_agents} active agents, ${payg.max_seats} seats and ` +
                `${
                  limitText(payg.daily_score_lookups)
                } tool recommendations a day: existing agents and members are kept, ` +
                `but new ones above the limits are refused, and calls cost the full price.`
            }
            if (hasSubscription) {
              const up = order[picked.plan] > order[current]
              return up
                ? `Move to ${name} now for ${fee} a month. The difference for the rest of this month is charged to ` +
                  `the card on file today; then ${fee} a month.`
                : `Move to ${name} now for ${fee} a month. Limits drop at once to ${
                  terms(picked.plan).max_active_agents
                } ` +
                  `active agents and ${
                    terms(picked.plan).max_seats
                  } seats (existing agents and members are kept, new ` +
                  `ones above the limits are refused); what is left of this month's higher fee is credited to your next invoice.`
            }
            return `Subscribe to ${name} for ${fee} a month, charged today and then every month until you cancel. ` +
              `You will pay on the payment page.`
          }
          return (
            <>
              <TableFrame label="Plans compared" stackOnPhone>
                <table className="plans">
                  <caption className="muted">
                    Every plan: up to {data.limits.webhook_endpoints_per_org} webhook endpoints.
                  </caption>
                  <thead>
                    <tr>
                      <th scope="col">Plan</th>
                      <th scope="col">Monthly fee</th>
                      <th scope="col">Tool recommendations a day</th>
                      <th scope="col">Recommendations from a written task a day</th>
                      <th scope="col">Active agents</th>
                      <th scope="col">Seats</th>
                      <th scope="col">Price of calls</th>
                      <th scope="col">
                        <span className="visually-hidden">Choose</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.plans.map((plan) => (
                      <tr key={plan.id} aria-current={plan.id === current ? "true" : undefined}>
                        <th scope="row">{plan.name}{plan.id === current ? " (current)" : ""}</th>
                        <td>{dollars(feeOf(plan.id, false))}</td>
                        <td>{limitText(plan.daily_score_lookups)}</td>
                        <td>{limitText(plan.daily_free_text_lookups)}</td>
                        <td>{plan.max_active_agents}</td>
                        <td>{plan.max_seats}</td>
                        <td>
                          {Number(plan.gateway_price_multiplier) === 1
                            ? "List price"
                            : `${Math.round((1 - Number(plan.gateway_price_multiplier)) * 100)}% off list price`}
                        </td>
                        <td>
                          <button
                            type="button"
                            className="secondary"
                            disabled={plan.id === current}
                            onClick={() => setChoice({ plan: plan.id, founding: false })}
                          >
                            {plan.id === current ? "Current plan" : `Choose ${plan.name}`}
                          </button>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableFrame>
              <p>
                <strong>{offer.name}:</strong> {offer.description} {offer.status === "open"
                  ? <span>{offer.remaining} of {offer.total} founding seats left.</span>
                  : offer.status === "sold_out"
                  ? <span>All founding seats are taken.</span>
                  : <span>The offer has ended.</span>}
                {offerClaim === "used" && !founding
                  ? <span>This org has already used it (it is once per org).</span>
                  : offerClaim === "under_way"
                  ? <span>This org's checkout for it is under way: finish it, or wait until it expires.</span>
                  : null}
              </p>
              {offer.status === "open" && current === "payg" && !founding && offerClaim === null
                ? (
                  <button
                    type="button"
                    className="secondary"
                    onClick={() => setChoice({ plan: "pro", founding: true })}
                  >
                    Choose {offer.name} at {dollars(offer.monthly_fee_usd)} a month
                  </button>
                )
                : null}
              {choice === null ? null : (
                <div className="notice stack" role="group" aria-label="Confirm the plan change">
                  <p>{confirmText(choice)}</p>
                  <div className="actions">
                    <button
                      type="button"
                      disabled={change.isPending || leaving}
                      onClick={() =>
                        change.mutate(choice, {
                          onSuccess: (answer) => {
                            if (answer.checkout_url !== null) window.location.assign(answer.checkout_url)
                            else setChoice(null)
                          }
                        })}
                    >
                      {choice.plan === "payg"
                        ? "Confirm: move to Pay as you go"
                        : hasSubscription
                        ? `Confirm: ${dollars(feeOf(choice.plan, choice.founding))} a month`
                        : `Continue to payment: ${dollars(feeOf(choice.plan, choice.founding))} a month`}
                    </button>
                    <button type="button" className="secondary" onClick={() => setChoice(null)}>Keep my plan</button>
                  </div>
                </div>
              )}
              {change.isSuccess && !leaving ? <p role="status">{ownerText(change.data.next_step)}</p> : null}
              {leaving ? <p role="status">Taking you to the payment page…</p> : null}
              <ErrorNotice error={change.error} />
            </>
          )
        }}
      </Loaded>
    </section>
  )
}
