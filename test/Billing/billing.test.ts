import { afterAll, beforeAll, describe } from "vitest"
import { startWorld, type World } from "../support/world.js"
import { autoReloadCases } from "./wire/autoReload.js"
import { autoReloadWakeCases } from "./wire/autoReloadWake.js"
import { cardSetupCases } from "./wire/cardSetup.js"
import { checkoutCases } from "./wire/checkout.js"
import { plansCases } from "./wire/plans.js"
import { topUpsCases } from "./wire/topUps.js"
import { webhooksCases } from "./wire/webhooks.js"

/**
 * Billing with Stripe over HTTP, one service for all of it: the service speaks to the
 * Stripe emulator (packages/stripe-emulator) over its socket with the official Stripe
 * library, Stripe's events reach its webhook route signed. Each part of the family is a
 * module of test/Billing/wire/, given the one world: top-ups, Checkout, the webhook route,
 * saving a card, auto-reload, plans, and (last: it restarts the service with the periodic
 * look ten minutes away) auto-reload woken by a settlement. The rules these routes rest on
 * (refunds and disputes, events in any order, the cap and INR, the expiry sweep) are proved
 * on the services: returns, eventOrders, capAndFx and checkoutExpiry.test.ts.
 *
 * The plans come after the others: they move the emulator's clock by months.
 */
let world: World

beforeAll(async () => {
  world = await startWorld("billing", { stripe: true, provider: true, env: { AUTO_RELOAD_RETRY_MS: "150" } })
})

afterAll(async () => {
  await world?.close()
})

const started = () => world

describe("top-ups", () => topUpsCases(started))
describe("Checkout", () => checkoutCases(started))
describe("the webhook route", () => webhooksCases(started))
describe("saving a card", () => cardSetupCases(started))
describe("auto-reload", () => autoReloadCases(started))
describe("plans", () => plansCases(started))
describe("auto-reload woken in the process", () => autoReloadWakeCases(started))
