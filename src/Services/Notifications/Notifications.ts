import { Effect, Option } from "effect"
import type { OrgActor } from "../../Domain/Current.js"
import { CREDITS_PER_USD, creditsToUsd } from "../../Domain/Money.js"
import { InvalidInput, NotFound } from "../../Errors/ApiErrors.js"
import { requireOwner } from "../Auth/Roles.js"
import { OrgsRepo } from "../Orgs/OrgsRepo.js"

/**
 * An org's notification settings: the low-balance alert (`low_balance_usd`, default $5),
 * kept as whole credits in `orgs.low_balance_credits`, which the ledger reads when it
 * decides to emit `balance.low`.
 */
export const MAX_LOW_BALANCE_USD = 1_000_000n

/** Exact credits for a USD amount written with at most three decimals ("5", "12.5", 0.25). */
export const parseUsd = (value: number | string): bigint | undefined => {
  const text = typeof value === "number" ? (Number.isFinite(value) ? String(value) : "") : value.trim()
  const match = /^(\d+)(?:\.(\d{1,3}))?$/.exec(text)
  if (match === null) return undefined
  return BigInt(match[1]!) * CREDITS_PER_USD + BigInt((match[2] ?? "").padEnd(3, "0"))
}

const settingsRecord = (credits: bigint) => ({
  low_balance_usd: creditsToUsd(credits),
  low_balance_credits: credits.toString()
})

export class Notifications extends Effect.Service<Notifications>()("Notifications/Notifications", {
  dependencies: [OrgsRepo.Default],
  effect: Effect.gen(function*() {
    const orgs = yield* OrgsRepo

    const answer = (credits: Option.Option<bigint>) =>
      Option.match(credits, {
        onNone: () => Effect.fail(new NotFound({ message: "No such org" })),
        onSome: (value) => Effect.succeed({ notifications: settingsRecord(value) })
      })

    const get = (actor: OrgActor) => Effect.flatMap(orgs.lowBalanceCredits(actor.org_id), answer)

    const update = (actor: OrgActor, input: { readonly low_balance_usd: number | string }) =>
      Effect.gen(function*() {
        yield* requireOwner(actor)
        const credits = parseUsd(input.low_balance_usd)
        if (credits === undefined || credits > MAX_LOW_BALANCE_USD * CREDITS_PER_USD) {
          return yield* new InvalidInput({
            message: `low_balance_usd must be a USD amount from 0 to ${MAX_LOW_BALANCE_USD} with at most 3 decimals`
          })
        }
        return yield* Effect.flatMap(orgs.setLowBalanceCredits(actor.org_id, credits), answer)
      })

    return { get, update } as const
  })
}) {}
