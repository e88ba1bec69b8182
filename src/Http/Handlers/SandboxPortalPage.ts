import { HttpApiBuilder, HttpRouter, HttpServerRequest, HttpServerResponse, UrlParams } from "@effect/platform"
import { Effect, Option } from "effect"
import { minorToDecimal } from "../../Domain/Billing.js"
import { escapeHtml } from "../../Domain/Html.js"
import { BillingRepo } from "../../Services/Billing/BillingRepo.js"
import { PaymentProvider } from "../../Services/Billing/PaymentProvider.js"
import { PlanSubscriptions } from "../../Services/Billing/PlanSubscriptions.js"
import { SandboxPayments } from "../../Services/Billing/SandboxProvider.js"
import { sandboxPortalPath, SandboxSubscriptions } from "../../Services/Billing/SandboxSubscriptions.js"
import { SavedCards } from "../../Services/Billing/SavedCards.js"
import { sandboxPageHeaders, sandboxPageHtml } from "./SandboxCheckoutPage.js"

/**
 * The development sandbox's customer portal, standing where Stripe's is in production: the
 * owner sees the plan's subscription and its invoices, replaces the card or cancels the
 * subscription, then goes back to billing. A plain form (no script), clearly marked as a
 * sandbox. What it changes is applied at once, as Stripe's events would be.
 */
const notFound = HttpServerResponse.text("No such sandbox portal session", { status: 404, headers: sandboxPageHeaders })

export const SandboxPortalPageLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const provider = yield* PaymentProvider
    if (provider.kind !== "sandbox") return
    const sandbox = yield* SandboxSubscriptions
    const payments = yield* SandboxPayments
    const subscriptions = yield* PlanSubscriptions
    const cards = yield* SavedCards
    const repo = yield* BillingRepo
    const path = sandboxPortalPath(":sessionId") as `/${string}`
    const sessionId = Effect.map(HttpRouter.params, (params) => params.sessionId ?? "")

    const render = (id: string, message: string | null) =>
      Effect.gen(function*() {
        const page = yield* sandbox.portalPage(id)
        const live = page.subscriptions.filter((sub) => sub.status === "active" || sub.status === "past_due")
        const subscriptionList = page.subscriptions.length === 0
          ? "<p>No subscription.</p>"
          : `<ul>${
            page.subscriptions.map((sub) =>
              `<li>${escapeHtml(minorToDecimal(sub.amount_minor))} USD a month, ${
                escapeHtml(sub.status)
              }, card ending ${escapeHtml(sub.card_last4)}${
                sub.status === "active" || sub.status === "past_due"
                  ? `, renews ${escapeHtml(sub.current_period_end.toISOString().slice(0, 10))}`
                  : ""
              }</li>`
            ).join("")
          }</ul>`
        const invoiceList = page.invoices.length === 0 ?
          "<p>No invoices yet.</p>" :
          `<ul>${
            page.invoices.map((invoice) =>
              `<li>${escapeHtml(minorToDecimal(invoice.amount_minor))} USD, ${
                invoice.status === "paid" ? "paid" : "not paid"
              }${invoice.failure_message === null ? "" : ` (${escapeHtml(invoice.failure_message)})`}</li>`
            ).join("")
          }</ul>`
        return sandboxPageHtml(
          "Sandbox billing portal",
          `<p class="banner" role="note">Sandbox billing portal: development only, no money moves.</p>` +
            `<h1>Billing portal</h1>` +
            (message === null ? "" : `<p role="status">${escapeHtml(message)}</p>`) +
            `<h2>Subscription</h2>${subscriptionList}` +
            (live.length === 0
              ? ""
              : `<form method="post"><input type="hidden" name="action" value="cancel">` +
                `<button type="submit">Cancel the subscription</button></form>`) +
            `<h2>Card</h2><form method="post"><input type="hidden" name="action" value="card">` +
            `<label>New test card number <input name="card_number" inputmode="numeric" autocomplete="off" ` +
            `value="5555 5555 5555 4444" required></label><button type="submit">Replace the card</button></form>` +
            `<h2>Invoices</h2>${invoiceList}` +
            `<p><a href="${escapeHtml(page.returnUrl)}">Back to billing</a></p>`
        )
      })

    yield* router.get(
      path,
      Effect.flatMap(sessionId, (id) => render(id, null)).pipe(
        Effect.catchTag("not_found", () => Effect.succeed(notFound))
      )
    )

    yield* router.post(
      path,
      Effect.gen(function*() {
        const id = yield* sessionId
        const page = yield* sandbox.portalPage(id)
        const request = yield* HttpServerRequest.HttpServerRequest
        const form = yield* request.urlParamsBody.pipe(Effect.orElseSucceed(() => UrlParams.empty))
        const action = Option.getOrElse(UrlParams.getFirst(form, "action"), () => "")
        const orgId = yield* repo.orgOfCustomer(page.customerId)
        if (action === "cancel") {
          for (const sub of page.subscriptions) {
            if (sub.status !== "active" && sub.status !== "past_due") continue
            // As Stripe's `customer.subscription.deleted` would: the plan follows at once.
            const ended = yield* sandbox.provider.cancelSubscription(sub.id)
            yield* subscriptions.apply({ subscription: ended, invoice: null })
          }
          return yield* render(id, "The subscription is cancelled.")
        }
        if (action === "card") {
          const card = yield* payments.testCard(Option.getOrElse(UrlParams.getFirst(form, "card_number"), () => ""))
          if (card.behaviour === "declined" || card.behaviour === "insufficient_funds") {
            return yield* render(id, "That card was declined; the card on file is unchanged.")
          }
          yield* sandbox.replaceCard(page.customerId, card)
          // As Stripe's `customer.updated` would: the new card is the org's card.
          if (Option.isSome(orgId)) {
            yield* cards.keep(orgId.value, {
              succeeded: true,
              customerId: page.customerId,
              paymentMethodId: card.paymentMethodId,
              card: { brand: card.brand, last4: card.last4, expMonth: 12, expYear: 2099 }
            })
          }
          return yield* render(id, `The card ending ${card.last4} is now the card on file.`)
        }
        return yield* render(id, null)
      }).pipe(
        Effect.catchTag("not_found", () => Effect.succeed(notFound)),
        Effect.catchTag("invalid_input", (error) =>
          Effect.flatMap(sessionId, (id) => render(id, error.message)).pipe(
            Effect.catchTag("not_found", () => Effect.succeed(notFound))
          ))
      )
    )
  })
)
