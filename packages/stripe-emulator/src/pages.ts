import { testCards } from "./cards.js"

/**
 * The emulator's hosted pages (checkout, its 3-D Secure step, the customer portal): plain
 * forms with no script and nothing from another origin, each marked as a sandbox so no one
 * mistakes it for Stripe's. A form posts back to the page's own address.
 */
export interface Page {
  readonly status: number
  readonly html?: string
  /** A redirect (303) to this address. */
  readonly location?: string
  /** The origins a form's answer may send the browser to (the session's return addresses). */
  readonly returnsTo?: ReadonlyArray<string>
}

export const pageHeaders = (page: Page) => ({
  "content-type": "text/html; charset=utf-8",
  // A form's answer may redirect to the page's return address: the browser checks that too.
  "content-security-policy": `default-src 'none'; style-src 'unsafe-inline'; form-action 'self'${
    (page.returnsTo ?? []).map((origin) => ` ${origin}`).join("")
  }; frame-ancestors 'none'`,
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  ...(page.location === undefined ? {} : { location: page.location })
})

export const escapeHtml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

const document = (title: string, banner: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>` +
  `<meta name="viewport" content="width=device-width, initial-scale=1"><style>` +
  `body{font-family:system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem}` +
  `.banner{background:#fde68a;border:2px solid #b45309;padding:.75rem;font-weight:bold}` +
  `.error{color:#b91c1c}label{display:block;margin:1rem 0}input{font-size:1.1rem;width:100%}` +
  `button{font-size:1.1rem;padding:.5rem 1rem;margin:.25rem 0}</style></head><body>` +
  `<p class="banner" role="note">${banner}</p>${body}</body></html>`

export const page = (status: number, title: string, banner: string, body: string): Page => ({
  status,
  html: document(title, banner, body)
})

const CHECKOUT_BANNER = "Sandbox checkout: development only, no money moves."
const PORTAL_BANNER = "Sandbox billing portal: development only, no money moves."

const alert = (message: string | null) =>
  message === null ? "" : `<p class="error" role="alert">${escapeHtml(message)}</p>`

const cardList = testCards
  .map((card) =>
    `<li><code>${card.number.replace(/(\d{4})(?=\d)/g, "$1 ")}</code>: ${card.behaviour.replace(/_/g, " ")}</li>`
  )
  .join("")

export const checkoutPage = {
  /** The card form of an open session. */
  form: (action: string, cancelUrl: string, failure: string | null): Page =>
    page(
      200,
      "Sandbox checkout",
      CHECKOUT_BANNER,
      `<h1>${escapeHtml(action)}</h1>${alert(failure)}` +
        `<form method="post"><label>Test card number <input name="card_number" inputmode="numeric" ` +
        `autocomplete="off" value="4242 4242 4242 4242" required></label>` +
        `<button type="submit">${escapeHtml(action)}</button></form>` +
        `<p><a href="${escapeHtml(cancelUrl)}">Cancel and go back</a></p>` +
        `<details><summary>Test cards (any expiry, any CVC)</summary><ul>${cardList}</ul></details>`
    ),
  /** The card's bank asks its holder to confirm (3-D Secure), as Stripe's test page does. */
  challenge: (cardNumber: string, last4: string): Page =>
    page(
      200,
      "3-D Secure",
      CHECKOUT_BANNER,
      `<h1>3-D Secure authentication</h1><p>The bank of the card ending ${escapeHtml(last4)} asks its holder ` +
        `to confirm this payment.</p><form method="post">` +
        `<input type="hidden" name="card_number" value="${escapeHtml(cardNumber)}">` +
        `<button type="submit" name="three_d_secure" value="complete">Complete authentication</button>` +
        `<button type="submit" name="three_d_secure" value="fail">Fail authentication</button></form>`
    ),
  /** A session that is no longer open. */
  ended: (status: number, heading: string, back: string): Page =>
    page(
      status,
      "Sandbox checkout",
      CHECKOUT_BANNER,
      `<h1>${escapeHtml(heading)}</h1><p><a href="${escapeHtml(back)}">Back to billing</a></p>`
    ),
  missing: (): Page => page(404, "Sandbox checkout", CHECKOUT_BANNER, "<h1>No such checkout</h1>")
}

export const portalPage = {
  view: (input: {
    readonly notice: string | null
    readonly failure: string | null
    readonly card: { readonly brand: string; readonly last4: string } | null
    readonly plans: ReadonlyArray<{ readonly name: string; readonly status: string }>
    readonly invoices: ReadonlyArray<{ readonly amount: string; readonly status: string; readonly url: string }>
    readonly returnUrl: string
  }): Page =>
    page(
      200,
      "Sandbox billing portal",
      PORTAL_BANNER,
      `<h1>Billing</h1>` +
        (input.notice === null ? "" : `<p role="status">${escapeHtml(input.notice)}</p>`) + alert(input.failure) +
        `<h2>Plan</h2>` +
        (input.plans.length === 0
          ? "<p>No active subscription</p>"
          : input.plans.map((plan) => `<p>${escapeHtml(plan.name)}: ${escapeHtml(plan.status)}</p>`).join("") +
            `<form method="post"><input type="hidden" name="action" value="cancel">` +
            `<button type="submit">Cancel the subscription</button></form>`) +
        `<h2>Card</h2>` +
        (input.card === null
          ? "<p>No card on file</p>"
          : `<p>Card on file: ${escapeHtml(input.card.brand)} ending ${escapeHtml(input.card.last4)}</p>` +
            `<form method="post"><input type="hidden" name="action" value="remove_card">` +
            `<button type="submit">Remove the card</button></form>`) +
        `<form method="post"><input type="hidden" name="action" value="card"><label>Test card number ` +
        `<input name="card_number" inputmode="numeric" autocomplete="off" required></label>` +
        `<button type="submit">Replace the card</button></form>` +
        `<h2>Invoices</h2>` +
        (input.invoices.length === 0
          ? "<p>No invoices</p>"
          : `<ul>${
            input.invoices.map((invoice) =>
              `<li>${escapeHtml(invoice.amount)} USD, ${escapeHtml(invoice.status)}: ` +
              `<a href="${escapeHtml(invoice.url)}">receipt</a></li>`
            ).join("")
          }</ul>`) +
        `<p><a href="${escapeHtml(input.returnUrl)}">Return</a></p>`
    ),
  missing: (): Page => page(404, "Sandbox billing portal", PORTAL_BANNER, "<h1>No such portal session</h1>")
}

export const receipt = {
  view: (input: {
    readonly amount: string
    readonly card: { readonly brand: string; readonly last4: string } | null
    readonly refunded: string | null
    readonly status?: string
  }): Page =>
    page(
      200,
      "Sandbox receipt",
      "Sandbox receipt: development only, no money moved.",
      `<h1>Receipt: ${escapeHtml(input.amount)}</h1>` +
        (input.status === undefined ? "" : `<p>Status: ${escapeHtml(input.status)}</p>`) +
        (input.card === null
          ? ""
          : `<p>Card: ${escapeHtml(input.card.brand)} ending ${escapeHtml(input.card.last4)}</p>`) +
        (input.refunded === null ? "" : `<p>Refunded: ${escapeHtml(input.refunded)}</p>`)
    ),
  missing: (): Page =>
    page(404, "Sandbox receipt", "Sandbox receipt: development only, no money moved.", "<h1>No such receipt</h1>")
}
