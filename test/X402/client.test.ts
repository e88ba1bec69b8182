import type { FacilitatorEmulator } from "@agent-gateway/x402-facilitator"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AgentGateway } from "../../clients/typescript/src/index.js"
import { emailFindInput } from "../Purchasing/support.js"
import type { World } from "../support/world.js"
import { freshWallet, startX402World } from "./support.js"

/**
 * The TypeScript client given a wallet and no key, against the service itself with x402 on and
 * the facilitator emulator behind it: it is asked to pay, pays, and gets the service's answer
 * with the settlement (`payment`) and the signed record naming its wallet (`record`); a retry
 * under its idempotency key (the payment-identifier) answers the first purchase, settling once.
 */
let emulator: FacilitatorEmulator
let world: World
let close: () => Promise<void>

beforeAll(async () => {
  ;({ close, emulator, world } = await startX402World("x402client"))
})

afterAll(() => close?.())

describe("the TypeScript client paying the service", () => {
  it("calls and buys with a wallet, no key: paid, settled, and answered with the payer's signed record", async () => {
    const wallet = freshWallet(emulator)
    const before = emulator.balanceOf(wallet.address)
    const gateway = new AgentGateway({ baseUrl: world.server.url, payer: wallet, apiKey: "" })

    const call = await gateway.call({ endpoint: "fakeprov/ok" })
    expect(call).toMatchObject({ status: "succeeded", data: { ok: true, answer: 42 } })
    expect(call.payment).toMatchObject({ success: true, network: "eip155:84532" })
    expect(call.record).toMatchObject({ payer: wallet.address.toLowerCase(), payment: { status: "settled" } })
    expect(emulator.balanceOf(wallet.address)).toBe(before - 10_000n)

    const inputs = [emailFindInput(1), emailFindInput(2, "mock-fail")]
    const order = { tool: "hunter-email-finder", inputs, idempotency_key: "order-client-000001" }
    const bought = await gateway.execute(order)
    if (bought.status !== "done") throw new Error("two inputs answer at once")
    expect(bought.counts).toMatchObject({ passed: 1, failed: 1 })
    expect(bought.payment).toMatchObject({ success: true, amount: "40000" })
    expect(bought.record).toMatchObject({ payer: wallet.address.toLowerCase(), payment: { settled_units: "40000" } })
    expect(emulator.balanceOf(wallet.address)).toBe(before - 10_000n - 40_000n)

    // The same order again under its key: the first purchase's answer, nothing settled twice.
    const again = await gateway.execute(order)
    if (again.status !== "done") throw new Error("two inputs answer at once")
    expect(again.receipt_id).toBe(bought.receipt_id)
    expect(emulator.balanceOf(wallet.address)).toBe(before - 10_000n - 40_000n)
  })
})
