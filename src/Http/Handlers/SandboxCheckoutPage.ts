import { HttpApiBuilder, HttpRouter, HttpServerRequest, HttpServerResponse, UrlParams } from "@effect/platform"
import { Effect, Option } from "effect"
import { minorToDecimal } from "../../Domain/Billing.js"
import { escapeHtml } from "../../Domain/Html.js"
import { Checkouts } from "../../Services/Billing/Checkouts.js"
import { PaymentProvider } from "../../Services/Billing/PaymentProvider.js"
import {
  type SandboxCheckoutPage,
  sandboxCheckoutPath,
  SandboxPayments,
  sandboxTestCards
} from "../../Services/Billing/SandboxProvider.js"

/**
 * The development sandbox's hosted checkout page, standing where Stripe's is in production:
 * the dashboard sends the owner here, the owner pays with a test card, and the page sends
 * them back to the billing page. A plain form (no script, nothing from another origin),
 * clearly marked as a sandbox; it exists only while the sandbox is the payment provider.
 */
const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'"

export const sandboxPageHeaders = {
  "content-security-policy": PAGE_CSP,
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin"
}

/** A sandbox page (checkout, portal): marked, plain, its own strict CSP. */
export const sandboxPageHtml = (title: string, body: string) =>
  HttpServerResponse.text(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>` +
      `<meta name="viewport" content="width=device-width, initial-scale=1"><style>` +
      `body{font-family:system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem}` +
      `.banner{background:#fde68a;border:2px solid #b45309;padding:.75rem;font-weight:bold}` +
      `.error{color:#b91c1c}label{display:block;margin:1rem 0}input{font-size:1.1rem;width:100%}` +
      `button{font-size:1.1rem;padding:.5rem 1rem}</style></head><body>${body}</body></html>`,
    { contentType: "text/html; charset=utf-8", headers: sandboxPageHeaders }
  )

const html = (body: string) => sandboxPageHtml("Sandbox checkout", body)

const cards = Object.entries(sandboxTestCards)
  .map(([number, card]) =>
    `<li><code>${number.replace(/(\d{4})(?=\d)/g, "$1 ")}</code>: ${card.behaviour.replace(/_/g, " ")}</li>`
  )
  .join("")

const render = (page: SandboxCheckoutPage) => {
  const banner = `<p class="banner" role="note">Sandbox checkout: development only, no money moves.</p>`
  const amount = page.amountMinor === null ? null : `${minorToDecimal(page.amountMinor)} ${page.currency.toUpperCase()}`
  const action = amount === null ? "Save the card" : page.monthly ? `Subscribe: ${amount} a month` : `Pay ${amount}`
  if (page.checkout.status !== "open") {
    const back = page.checkout.status === "complete" ? page.successUrl : page.cancelUrl
    return html(
      `${banner}<h1>${
        page.checkout.status === "complete"
          ? (amount === null ? "Card saved" : page.monthly ? "Subscribed" : "Paid")
          : "This checkout has ended"
      }</h1>` +
        `<p><a href="${escapeHtml(back)}">Back to billing</a></p>`
    )
  }
  return html(
    `${banner}<h1>${escapeHtml(action)}</h1>` +
      (page.failureMessage === null ? "" : `<p class="error" role="alert">${escapeHtml(page.failureMessage)}</p>`) +
      `<form method="post"><label>Test card number <input name="card_number" inputmode="numeric" ` +
      `autocomplete="off" value="4242 4242 4242 4242" required></label>` +
      `<button type="submit">${escapeHtml(action)}</button></form>` +
      `<p><a href="${escapeHtml(page.cancelUrl)}">Cancel and go back</a></p>` +
      `<details><summary>Test cards (any expiry, any CVC)</summary><ul>${cards}</ul></details>`
  )
}

const notFound = HttpServerResponse.text("No such sandbox checkout", { status: 404, headers: sandboxPageHeaders })

export const SandboxCheckoutPageLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const provider = yield* PaymentProvider
    if (provider.kind !== "sandbox") return
    const sandbox = yield* SandboxPayments
    const checkouts = yield* Checkouts
    const path = sandboxCheckoutPath(":sessionId") as `/${string}`

    const sessionId = Effect.map(HttpRouter.params, (params) => params.sessionId ?? "")

    yield* router.get(
      path,
      Effect.gen(function*() {
        const page = yield* sandbox.checkoutPage(yield* sessionId)
        return Option.match(page, { onNone: () => notFound, onSome: (p) => render(p) })
      })
    )

    yield* router.post(
      path,
      Effect.gen(function*() {
        const id = yield* sessionId
        if (Option.isNone(yield* sandbox.checkoutPage(id))) return notFound
        const request = yield* HttpServerRequest.HttpServerRequest
        const form = yield* request.urlParamsBody.pipe(Effect.orElseSucceed(() => UrlParams.empty))
        const card = Option.getOrElse(UrlParams.getFirst(form, "card_number"), () => "")
        const paid = yield* sandbox.payCheckout(id, card).pipe(Effect.either)
        if (paid._tag === "Left") {
          const page = Option.getOrThrow(yield* sandbox.checkoutPage(id))
          return render({ ...page, failureMessage: paid.left.message })
        }
        const page = paid.right
        // As Stripe's events do before the customer is back: the outcome is known to the service.
        yield* checkouts.sync(id).pipe(Effect.orDie)
        if (page.checkout.status === "complete") {
          return HttpServerResponse.empty({
            status: 303,
            headers: { ...sandboxPageHeaders, location: page.successUrl }
          })
        }
        // The decline is shown on the page with its form, as a hosted checkout page does.
        return render(page)
      })
    )
  })
)
