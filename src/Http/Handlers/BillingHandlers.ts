import { confirmWithTestCard, testCards } from "@agent-gateway/stripe-emulator"
import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Clock, Effect, Option, Schema } from "effect"
import { CurrentActor, CurrentAdmin } from "../../Domain/Current.js"
import { PaymentId } from "../../Domain/Ids.js"
import { plans } from "../../Domain/Plans.js"
import { InvalidInput, NotConfigured, NotFound } from "../../Errors/ApiErrors.js"
import { AuthConfig } from "../../Services/Auth/AuthConfig.js"
import { requireOwner } from "../../Services/Auth/Roles.js"
import { AutoReload } from "../../Services/Billing/AutoReload.js"
import { BillingPortal } from "../../Services/Billing/BillingPortal.js"
import { BillingRepo } from "../../Services/Billing/BillingRepo.js"
import { CardSetups } from "../../Services/Billing/CardSetups.js"
import { PaymentProvider } from "../../Services/Billing/PaymentProvider.js"
import { paymentView } from "../../Services/Billing/PaymentRecords.js"
import { Payments, type StartedPayment } from "../../Services/Billing/Payments.js"
import { PaymentStates } from "../../Services/Billing/PaymentStates.js"
import { PaymentWebhooks } from "../../Services/Billing/PaymentWebhooks.js"
import { PlanChanges } from "../../Services/Billing/PlanChanges.js"
import { StripeEmulator } from "../../Services/Billing/StripeEmulator.js"
import { providerLabel, Summary } from "../../Services/Billing/Summary.js"
import { TopUps } from "../../Services/Billing/TopUps.js"
import { CreditAdjustments } from "../../Services/Operations/CreditAdjustments.js"
import { PublicUrl } from "../../Services/PublicUrl.js"
import { Api } from "../Api.js"

const nextStep = (kind: "stripe" | "sandbox" | "off", started: StartedPayment) => {
  if (
    started.payment.status !== "pending" && started.payment.status !== "failed" && started.payment.status !== "creating"
  ) {
    return `This payment is ${started.payment.status}; nothing more to do.`
  }
  if (started.checkoutUrl !== null) {
    return "Send the owner to checkout_url; the page comes back to the billing page, which confirms the payment."
  }
  return kind === "stripe"
    ? `Confirm client_secret with Stripe.js (stripe.confirmCardPayment), then POST /v1/orgs/${started.payment.org_id}/billing/payments/${started.payment.id}/confirm.`
    : `Sandbox: POST /v1/billing/sandbox/confirm {client_secret, card_number: "4242424242424242"}.`
}

export const BillingHandlers = HttpApiBuilder.group(Api, "billing", (handlers) =>
  Effect.gen(function*() {
    const provider = yield* PaymentProvider
    const payments = yield* Payments
    const topUps = yield* TopUps
    const autoReload = yield* AutoReload
    const planChanges = yield* PlanChanges
    const summary = yield* Summary
    const cardSetups = yield* CardSetups
    const portal = yield* BillingPortal
    const repo = yield* BillingRepo
    const label = providerLabel(provider.kind, provider.publishableKey)
    const { dashboardPath } = yield* AuthConfig
    const dashboardUrl = `${yield* PublicUrl}${dashboardPath === "/" ? "" : dashboardPath}`

    const started = (result: StartedPayment) => ({
      payment: paymentView(result.payment),
      client_secret: result.clientSecret,
      checkout_url: result.checkoutUrl,
      provider: label,
      next_step: nextStep(provider.kind, result)
    })

    return handlers
      .handle("summary", () => Effect.flatMap(CurrentActor, summary.get))
      .handle("payments", ({ urlParams }) =>
        Effect.gen(function*() {
          const after = urlParams.starting_after
          const startingAfter = after === undefined ? undefined : Schema.decodeUnknownOption(PaymentId)(after)
          const list = yield* payments.list(yield* CurrentActor, urlParams.limit, startingAfter)
          return { ...list, provider: label }
        }))
      .handle("payment", ({ path }) =>
        Effect.map(
          Effect.flatMap(CurrentActor, (actor) => payments.get(actor, path.paymentId)),
          (payment) => ({
            payment,
            provider: label
          })
        ))
      .handle("topUp", ({ payload }) =>
        Effect.gen(function*() {
          return started(yield* topUps.start(yield* CurrentActor, payload))
        }))
      .handle("checkout", ({ payload }) =>
        Effect.gen(function*() {
          return started(yield* topUps.start(yield* CurrentActor, payload, { dashboardUrl }))
        }))
      .handle("cancel", ({ path }) =>
        Effect.gen(function*() {
          const row = yield* payments.cancel(yield* CurrentActor, path.paymentId)
          return { payment: paymentView(row), provider: label }
        }))
      .handle("confirm", ({ path }) =>
        Effect.gen(function*() {
          const row = yield* payments.confirm(yield* CurrentActor, path.paymentId)
          return { payment: paymentView(row), provider: label }
        }))
      .handle("autoReload", () =>
        Effect.gen(function*() {
          return { auto_reload: yield* autoReload.settings(yield* CurrentActor), provider: label }
        }))
      .handle("setAutoReload", ({ payload }) =>
        Effect.gen(function*() {
          return { auto_reload: yield* autoReload.update(yield* CurrentActor, payload), provider: label }
        }))
      .handle("cardSetup", () =>
        Effect.gen(function*() {
          const setup = yield* cardSetups.start(yield* CurrentActor, { dashboardUrl })
          return { checkout_url: setup.checkoutUrl, provider: label }
        }))
      .handle("cardSetupConfirm", () =>
        Effect.gen(function*() {
          const actor = yield* CurrentActor
          const finished = yield* cardSetups.finish(actor)
          const card = (yield* summary.get(actor)).card
          return { status: finished.status, card, provider: label }
        }))
      .handle("removeCard", () =>
        Effect.gen(function*() {
          yield* payments.requireConfigured
          const actor = yield* CurrentActor
          yield* requireOwner(actor)
          const at = new Date(yield* Clock.currentTimeMillis)
          yield* repo.ensureProfile(actor.org_id, at).pipe(Effect.orDie)
          yield* repo.updateProfile(actor.org_id, {
            card_payment_method_id: null,
            card_brand: null,
            card_last4: null,
            card_exp_month: null,
            card_exp_year: null,
            // A later return from the last card setup must not bring the card back.
            card_setup_session_id: null,
            auto_reload_enabled: false,
            updated_at: at
          }).pipe(Effect.orDie)
          return { status: "removed" as const, provider: label }
        }))
      .handle("changePlan", ({ payload }) =>
        Effect.gen(function*() {
          const result = yield* planChanges.change(yield* CurrentActor, payload, { dashboardUrl })
          if (result._tag === "changed") {
            return {
              plan: result.plan,
              payment: null,
              client_secret: null,
              checkout_url: null,
              provider: label,
              next_step: result.plan === "payg"
                ? "The org is on Pay as you go now."
                : `The org is on ${
                  plans[result.plan].name
                } now; the difference for the rest of the month is charged to the card on file.`
            }
          }
          const answer = started(result.payment)
          return {
            plan: result.plan,
            ...answer,
            next_step: `The plan changes when the first month is paid. ${answer.next_step}`
          }
        }))
      .handle("portal", () =>
        Effect.gen(function*() {
          const url = yield* portal.open(yield* CurrentActor, { dashboardUrl })
          return { portal_url: url, provider: label }
        }))
  }))

export const PaymentWebhookHandlers = HttpApiBuilder.group(Api, "paymentWebhook", (handlers) =>
  Effect.gen(function*() {
    const webhooks = yield* PaymentWebhooks
    return handlers.handle("receive", () =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        // The raw body as received: the signature covers these exact bytes.
        const raw = yield* request.text.pipe(Effect.orDie)
        return yield* webhooks.receive(raw, request.headers["stripe-signature"])
      }))
  }))

export const SandboxPaymentsHandlers = HttpApiBuilder.group(
  Api,
  "sandboxPayments",
  (handlers) =>
    Effect.gen(function*() {
      const provider = yield* PaymentProvider
      const emulator = yield* StripeEmulator
      const states = yield* PaymentStates
      const repo = yield* BillingRepo
      const label = providerLabel(provider.kind, provider.publishableKey)
      return handlers.handle("confirm", ({ payload }) =>
        Effect.gen(function*() {
          if (Option.isNone(emulator)) {
            return yield* new NotConfigured({
              message: "The payment sandbox runs only in development without Stripe keys"
            })
          }
          // The card form plays Stripe.js: the emulator confirms the payment with the test card.
          const confirmed = yield* Effect.promise(() =>
            confirmWithTestCard(emulator.value.url, payload.client_secret, payload.card_number)
          )
          if (confirmed._tag === "not_a_test_card") {
            return yield* new InvalidInput({
              message: `Not a sandbox test card; use one of ${testCards.map((card) => card.number).join(", ")}`
            })
          }
          if (confirmed._tag === "no_such_payment") {
            return yield* new NotFound({ message: "No sandbox payment with that client secret" })
          }
          // The client comes straight back: apply the outcome as the confirm endpoint does.
          const payment = yield* provider.retrievePayment(confirmed.paymentIntentId).pipe(Effect.orDie)
          const applied = yield* states.apply(payment)
          if (Option.isNone(applied)) {
            return yield* new NotFound({ message: "No payment of the service uses that client secret" })
          }
          const row = yield* repo.findPayment(applied.value.org_id, applied.value.id)
          return { payment: paymentView(Option.getOrElse(row, () => applied.value)), provider: label }
        }))
    })
)

export const AdminBillingHandlers = HttpApiBuilder.group(Api, "adminBilling", (handlers) =>
  Effect.gen(function*() {
    const credits = yield* CreditAdjustments
    const repo = yield* BillingRepo
    return handlers.handle("unfreeze", ({ path }) =>
      Effect.gen(function*() {
        const org = yield* repo.org(path.orgId)
        if (Option.isNone(org)) return yield* new NotFound({ message: "No such org" })
        const admin = yield* CurrentAdmin
        yield* credits.unfreeze({ admin_id: admin.admin_id, email: admin.email }, org.value.id, undefined)
        return { org_id: path.orgId, credits_frozen: false as const }
      }))
  }))
