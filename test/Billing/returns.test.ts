import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { seedAdmin } from "../support/fixtures.js"
import { bearer } from "../support/fixtures.js"
import { balanceOf, expectLedgerInvariant } from "../support/ledgerChecks.js"
import { request } from "../support/server.js"
import { call, startWorld, type World } from "../support/world.js"
import { creditedTopUp, frozenOf, newOrg, paidTopUp, paymentEntries, webhookUrl } from "./support.js"

/**
 * Money a payment gives back: refunds and disputes of one payment add up to at most its
 * amount, a dispute's closing gives back (won) or keeps (lost) what its opening took, and
 * the org is frozen while a dispute is open or lost, coherently with administrators'
 * freezes and unfreezes. The property test over event orders is eventOrders.test.ts.
 */
let world: World

beforeAll(async () => {
  world = await startWorld("billing_returns", { stripe: true })
})

afterAll(async () => {
  await world?.close()
})

const deliver = async (event: { id: string; type: string; payload: string }) => {
  const answer = await world.stripe.deliver(webhookUrl(world), event)
  expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  return answer.body
}

const shown = async (org: { orgId: string; owner: { sessionToken: string } }, paymentId: string) =>
  (await call(world, "GET", `/v1/orgs/${org.orgId}/billing/payments/${paymentId}`, {
    token: org.owner.sessionToken
  })).json.payment

const admin = async () => {
  const { token } = await seedAdmin(world.db)
  return (path: string, body?: unknown) =>
    request(`${world.server.url}${path}`, { method: "POST", headers: bearer(token), body })
}

describe("refunds and disputes of one payment add up", () => {
  it("takes back 15,000 credits for $5 refunded and then $10 disputed of a $20 payment", async () => {
    const { org, payment } = await creditedTopUp(world, 20_000)
    const before = await balanceOf(world.db, org.orgId)
    await deliver(world.stripe.refund(payment.provider_payment_id, 500))
    expect(await balanceOf(world.db, org.orgId)).toBe(before - 5_000n)
    await deliver(world.stripe.dispute(payment.provider_payment_id, 1_000))
    expect(await balanceOf(world.db, org.orgId)).toBe(before - 15_000n)
    expect((await paymentEntries(world.db, org.orgId, payment.id)).map((e) => e.amount)).toEqual([
      "20000",
      "-5000",
      "-10000"
    ])
    expect(await shown(org, payment.id)).toMatchObject({
      status: "disputed",
      refunded: "5.000",
      disputed: "10.000",
      credits_taken_back: { credits: "15000" }
    })
    await expectLedgerInvariant(world.db)
  })

  it("never takes back more than the payment: a dispute after a full refund, a refund after a dispute", async () => {
    const first = await creditedTopUp(world, 20_000)
    const before = await balanceOf(world.db, first.org.orgId)
    await deliver(world.stripe.refund(first.payment.provider_payment_id, 2_000))
    await deliver(world.stripe.dispute(first.payment.provider_payment_id, 2_000))
    expect(await balanceOf(world.db, first.org.orgId)).toBe(before - 20_000n)

    const second = await creditedTopUp(world, 20_000)
    const start = await balanceOf(world.db, second.org.orgId)
    await deliver(world.stripe.dispute(second.payment.provider_payment_id, 1_000))
    expect(await balanceOf(world.db, second.org.orgId)).toBe(start - 10_000n)
    await deliver(world.stripe.refund(second.payment.provider_payment_id, 1_500))
    expect(await balanceOf(world.db, second.org.orgId)).toBe(start - 20_000n)
    expect(await shown(second.org, second.payment.id)).toMatchObject({ credits_taken_back: { credits: "20000" } })
    await expectLedgerInvariant(world.db)
  })

  it("credits a payment whose refund or dispute came before its success, and takes the returned money back at once", async () => {
    const org = await newOrg(world)
    const before = await balanceOf(world.db, org.orgId)
    const refunded = (await paidTopUp(world, org, { credits: 20_000 })).payment
    await deliver(world.stripe.refund(refunded.provider_payment_id, 2_000))
    expect(await balanceOf(world.db, org.orgId)).toBe(before)
    await deliver(world.stripe.lastEvent("payment_intent.succeeded", refunded.provider_payment_id))
    expect(await balanceOf(world.db, org.orgId)).toBe(before)
    expect(await paymentEntries(world.db, org.orgId, refunded.id)).toEqual([
      expect.objectContaining({ kind: "top_up", amount: "20000" }),
      expect.objectContaining({ kind: "adjustment", amount: "-20000", note: expect.stringMatching(/^Refund of/) })
    ])
    expect(await shown(org, refunded.id)).toMatchObject({
      status: "refunded",
      credits_taken_back: { credits: "20000" }
    })

    const disputed = (await paidTopUp(world, org, { credits: 10_000 })).payment
    await deliver(world.stripe.dispute(disputed.provider_payment_id, 1_000))
    expect(await frozenOf(world.db, org.orgId)).toBe(true)
    // The client coming back is a success path too.
    const confirmed = await call(world, "POST", `/v1/orgs/${org.orgId}/billing/payments/${disputed.id}/confirm`, {
      token: org.owner.sessionToken
    })
    expect(confirmed.status).toBe(200)
    expect(await balanceOf(world.db, org.orgId)).toBe(before)
    expect(await frozenOf(world.db, org.orgId)).toBe(true)
    await expectLedgerInvariant(world.db)
  })
  it("ends the same when every event arrives at once, each several times", async () => {
    const org = await newOrg(world)
    const before = await balanceOf(world.db, org.orgId)
    const payment = (await paidTopUp(world, org, { credits: 20_000 })).payment
    const piId = payment.provider_payment_id
    const events = [
      world.stripe.lastEvent("payment_intent.succeeded", piId),
      world.stripe.refund(piId, 300),
      world.stripe.refund(piId, 200),
      world.stripe.dispute(piId, 1_000),
      world.stripe.closeDispute(piId, "lost")
    ]
    const confirm = () =>
      call(world, "POST", `/v1/orgs/${org.orgId}/billing/payments/${payment.id}/confirm`, {
        token: org.owner.sessionToken
      })
    const answers = await Promise.all([
      ...events.flatMap((event) => Array.from({ length: 4 }, () => world.stripe.deliver(webhookUrl(world), event))),
      confirm(),
      confirm()
    ])
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200))
    // $5 refunded and $10 lost of $20: 15,000 of the 20,000 credits back to the card holder.
    expect(await balanceOf(world.db, org.orgId)).toBe(before + 5_000n)
    expect((await paymentEntries(world.db, org.orgId, payment.id)).reduce((sum, e) => sum + BigInt(e.amount), 0n))
      .toBe(5_000n)
    expect(await frozenOf(world.db, org.orgId)).toBe(true)
    await expectLedgerInvariant(world.db)
  })
})

describe("a dispute's closing", () => {
  it("won: gives back the disputed credits and lifts the freeze; refunds stay taken back", async () => {
    const { org, payment } = await creditedTopUp(world, 20_000)
    const before = await balanceOf(world.db, org.orgId)
    await deliver(world.stripe.refund(payment.provider_payment_id, 500))
    await deliver(world.stripe.dispute(payment.provider_payment_id, 1_000))
    expect(await frozenOf(world.db, org.orgId)).toBe(true)
    const won = world.stripe.closeDispute(payment.provider_payment_id, "won")
    expect(await deliver(won)).toEqual({ received: true, handled: true, duplicate: false })
    expect(await deliver(won)).toEqual({ received: true, handled: true, duplicate: true })
    expect(await balanceOf(world.db, org.orgId)).toBe(before - 5_000n)
    expect(await frozenOf(world.db, org.orgId)).toBe(false)
    expect(await paymentEntries(world.db, org.orgId, payment.id)).toEqual([
      expect.objectContaining({ kind: "top_up", amount: "20000" }),
      expect.objectContaining({ amount: "-5000", note: expect.stringMatching(/^Refund of/) }),
      expect.objectContaining({ amount: "-10000", note: expect.stringMatching(/^Chargeback of/) }),
      expect.objectContaining({ kind: "adjustment", amount: "10000", note: expect.stringMatching(/^Dispute won on/) })
    ])
    expect(await shown(org, payment.id)).toMatchObject({
      status: "partially_refunded",
      disputed: "10.000",
      credits_taken_back: { credits: "5000" }
    })
    await expectLedgerInvariant(world.db)
  })

  it("lost: the credits stay taken back and the org frozen until an administrator unfreezes; a late opening does not freeze again", async () => {
    const { org, payment } = await creditedTopUp(world, 20_000)
    const before = await balanceOf(world.db, org.orgId)
    // The closing arrives first.
    const created = world.stripe.dispute(payment.provider_payment_id, 2_000)
    await deliver(world.stripe.closeDispute(payment.provider_payment_id, "lost"))
    expect(await balanceOf(world.db, org.orgId)).toBe(before - 20_000n)
    expect(await frozenOf(world.db, org.orgId)).toBe(true)
    const post = await admin()
    expect((await post(`/admin/orgs/${org.orgId}/credits/unfreeze`)).status).toBe(200)
    await deliver(created)
    expect(await frozenOf(world.db, org.orgId)).toBe(false)
    expect(await balanceOf(world.db, org.orgId)).toBe(before - 20_000n)
    expect(await shown(org, payment.id)).toMatchObject({ status: "disputed", credits_taken_back: { credits: "20000" } })
    await expectLedgerInvariant(world.db)
  })

  it("won: leaves the freeze of an administrator, and of another dispute still open", async () => {
    const { org, payment } = await creditedTopUp(world, 20_000)
    await deliver(world.stripe.dispute(payment.provider_payment_id, 2_000))
    const post = await admin()
    expect((await post(`/admin/orgs/${org.orgId}/credits/freeze`, { reason: "card testing" })).status).toBe(200)
    await deliver(world.stripe.closeDispute(payment.provider_payment_id, "won"))
    expect(await frozenOf(world.db, org.orgId)).toBe(true)

    const other = await creditedTopUp(world, 10_000)
    const second = await creditedTopUp(world, 10_000, other.org)
    await deliver(world.stripe.dispute(other.payment.provider_payment_id, 1_000))
    await deliver(world.stripe.dispute(second.payment.provider_payment_id, 1_000))
    await deliver(world.stripe.closeDispute(other.payment.provider_payment_id, "won"))
    expect(await frozenOf(world.db, other.org.orgId)).toBe(true)
    await deliver(world.stripe.closeDispute(second.payment.provider_payment_id, "won"))
    expect(await frozenOf(world.db, other.org.orgId)).toBe(false)
    await expectLedgerInvariant(world.db)
  })
})
