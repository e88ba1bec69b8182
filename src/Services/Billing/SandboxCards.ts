/**
 * The development sandbox's test cards (any future expiry, any CVC), as Stripe's test
 * cards behave:
 * - 4242 4242 4242 4242 (Visa), 5555 5555 5555 4444 (Mastercard): succeed;
 * - 4000 0000 0000 0002: declined; 4000 0000 0000 9995: declined, insufficient funds;
 * - 4000 0027 6000 3184: succeeds when its holder is there, needs authentication off-session.
 */
export const sandboxTestCards = {
  "4242424242424242": { brand: "visa", behaviour: "succeeds" },
  "5555555555554444": { brand: "mastercard", behaviour: "succeeds" },
  "4000000000000002": { brand: "visa", behaviour: "declined" },
  "4000000000009995": { brand: "visa", behaviour: "insufficient_funds" },
  "4000002760003184": { brand: "visa", behaviour: "authentication_required" }
} as const

export type Behaviour = typeof sandboxTestCards[keyof typeof sandboxTestCards]["behaviour"]

export const declineMessages: Record<Exclude<Behaviour, "succeeds">, string> = {
  declined: "Your card was declined.",
  insufficient_funds: "Your card has insufficient funds.",
  authentication_required: "This payment needs the card holder's authentication."
}

/** A saved sandbox card carries its test behaviour in its id (`pm_sandbox_<behaviour>_<last4>_<random>`). */
export const behaviourOf = (paymentMethodId: string): Behaviour => {
  const found = /^pm_sandbox_([a-z_]+?)_\d{4}_/.exec(paymentMethodId)?.[1]
  return found === "succeeds" || found === "declined" || found === "insufficient_funds" ||
      found === "authentication_required"
    ? found
    : "declined"
}
