import { cardByNumber } from "./cards.js"
import { EMULATOR_PUBLISHABLE_KEY } from "./keys.js"

/**
 * What Stripe.js does in a browser, for clients of the sandbox that have none: confirms a
 * PaymentIntent by its client secret with a test card, through the API and the publishable
 * key. A decline still confirms (the payment records the failure).
 */
export type BrowserConfirmation =
  | { readonly _tag: "confirmed"; readonly paymentIntentId: string }
  | { readonly _tag: "not_a_test_card" }
  | { readonly _tag: "no_such_payment" }

export const confirmWithTestCard = async (
  emulatorUrl: string,
  clientSecret: string,
  cardNumber: string
): Promise<BrowserConfirmation> => {
  const card = cardByNumber(cardNumber)
  if (card === undefined) return { _tag: "not_a_test_card" }
  const paymentIntentId = clientSecret.split("_secret_")[0] ?? ""
  const response = await fetch(`${emulatorUrl}/v1/payment_intents/${encodeURIComponent(paymentIntentId)}/confirm`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${EMULATOR_PUBLISHABLE_KEY}`,
      "content-type": "application/x-www-form-urlencoded"
    },
    body: new URLSearchParams({ client_secret: clientSecret, payment_method: card.token }).toString()
  })
  await response.body?.cancel()
  return response.status === 404 ? { _tag: "no_such_payment" } : { _tag: "confirmed", paymentIntentId }
}
