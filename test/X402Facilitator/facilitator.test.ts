import {
  type FacilitatorEmulator,
  startFacilitatorEmulator,
  TEST_WALLET_PRIVATE_KEY,
  testWallet
} from "@agent-gateway/x402-facilitator"
import { x402Client } from "@x402/core/client"
import { HTTPFacilitatorClient } from "@x402/core/http"
import type { Network, PaymentPayload, PaymentRequirements } from "@x402/core/types"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { UptoEvmScheme } from "@x402/evm/upto/client"
import { getAddress, type Hex } from "viem"
import { generatePrivateKey, type PrivateKeyAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

/**
 * The x402 facilitator emulator over its socket, driven by the real `HTTPFacilitatorClient` as
 * the service drives a facilitator, with payments signed by the real `@x402/evm` client schemes:
 * valid payments verify and settle and move the token; what a chain or a facilitator refuses
 * (forged, expired, misdirected, short, unfunded, replayed) is refused.
 */
let emulator: FacilitatorEmulator
let facilitator: HTTPFacilitatorClient
const payTo = getAddress("0x1111111111111111111111111111111111111111")
const wallet = testWallet()

beforeAll(async () => {
  emulator = await startFacilitatorEmulator()
  facilitator = new HTTPFacilitatorClient({ url: emulator.url })
})
afterAll(() => emulator.close())

const exact = (overrides: Partial<PaymentRequirements> = {}): PaymentRequirements => ({
  scheme: "exact",
  network: emulator.network as Network,
  asset: emulator.asset.address,
  amount: "10000",
  payTo,
  maxTimeoutSeconds: 300,
  extra: { name: emulator.asset.name, version: emulator.asset.version },
  ...overrides
})

const upto = (overrides: Partial<PaymentRequirements> = {}): PaymentRequirements => ({
  ...exact(),
  scheme: "upto",
  extra: { facilitatorAddress: emulator.facilitatorAddress },
  ...overrides
})

/**
 * What a paying client sends for `requirements`: made by `x402Client` with the EVM schemes (its
 * own spending limits off, so it signs for the tokens and amounts the refusals need).
 */
const pay = (requirements: PaymentRequirements, payer: PrivateKeyAccount = wallet): Promise<PaymentPayload> =>
  new x402Client()
    .setSpendControls(false)
    .register(requirements.network, new ExactEvmScheme(payer))
    .register(requirements.network, new UptoEvmScheme(payer))
    .createPaymentPayload({
      x402Version: 2,
      resource: { url: "https://gateway.example/v1/call" },
      accepts: [requirements]
    })

const eip3009 = (payload: PaymentPayload) =>
  payload.payload as {
    signature: Hex
    authorization: { from: string; to: string; value: string; validBefore: string; nonce: Hex }
  }

describe("the facilitator's kinds", () => {
  it("lists exact and upto on its network, upto naming the facilitator's account", async () => {
    const supported = await facilitator.getSupported()
    const kinds = supported.kinds.map((k) => `${k.x402Version} ${k.scheme} ${k.network}`).sort()
    expect(kinds).toEqual(["2 exact eip155:84532", "2 upto eip155:84532"])
    expect(supported.kinds.find((k) => k.scheme === "upto")?.extra).toEqual({
      facilitatorAddress: emulator.facilitatorAddress
    })
    expect(Object.values(supported.signers).flat()).toContain(emulator.facilitatorAddress)
  })

  it("funds the test wallet with 1,000 USDC of Base Sepolia, and any wallet it is told to", () => {
    expect(wallet.address).toBe("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266")
    expect(testWallet(TEST_WALLET_PRIVATE_KEY).address).toBe(wallet.address)
    expect(emulator.asset.address).toBe("0x036CbD53842c5426634e7929541eC2318f3dCF7e")
    expect(emulator.balanceOf(wallet.address)).toBeGreaterThanOrEqual(0n)
    const other = testWallet(generatePrivateKey())
    expect(emulator.balanceOf(other.address)).toBe(0n)
    emulator.fund(other.address, 5_000n)
    emulator.fund(other.address, 2_000n)
    expect(emulator.balanceOf(other.address)).toBe(7_000n)
  })
})

describe("exact (EIP-3009)", () => {
  it("verifies and settles a valid payment, moving the amount from payer to payee once", async () => {
    const requirements = exact()
    const payload = await pay(requirements)
    const payerBefore = emulator.balanceOf(wallet.address)
    const payeeBefore = emulator.balanceOf(payTo)

    const verified = await facilitator.verify(payload, requirements)
    expect(verified).toMatchObject({ isValid: true, payer: wallet.address })
    expect(emulator.balanceOf(wallet.address)).toBe(payerBefore)

    const settled = await facilitator.settle(payload, requirements)
    expect(settled).toMatchObject({ success: true, network: "eip155:84532", payer: wallet.address })
    expect(settled.transaction).toMatch(/^0x[0-9a-f]{64}$/)
    expect(emulator.balanceOf(wallet.address)).toBe(payerBefore - 10_000n)
    expect(emulator.balanceOf(payTo)).toBe(payeeBefore + 10_000n)
    expect(emulator.settlements().at(-1)).toMatchObject({
      transaction: settled.transaction,
      from: wallet.address,
      to: payTo,
      amount: 10_000n,
      method: "eip3009"
    })

    // The same authorisation again: its nonce is used on chain.
    const replayed = await facilitator.settle(payload, requirements)
    expect(replayed).toMatchObject({ success: false, errorReason: "invalid_exact_evm_nonce_already_used" })
    expect(await facilitator.verify(payload, requirements)).toMatchObject({
      isValid: false,
      invalidReason: "invalid_exact_evm_nonce_already_used"
    })
    expect(emulator.balanceOf(wallet.address)).toBe(payerBefore - 10_000n)
  })

  it("settles one authorisation once when its settlements race", async () => {
    const requirements = exact({ amount: "1234" })
    const payload = await pay(requirements)
    const before = emulator.balanceOf(wallet.address)
    const results = await Promise.all(Array.from({ length: 8 }, () => facilitator.settle(payload, requirements)))
    expect(results.filter((r) => r.success)).toHaveLength(1)
    expect(emulator.balanceOf(wallet.address)).toBe(before - 1234n)
  })

  it("refuses a forged signature: tampered, or signed by another key for the test wallet", async () => {
    const requirements = exact()
    const payload = await pay(requirements)
    const signature = eip3009(payload).signature
    const flipped = `${signature.slice(0, 10)}${signature[10] === "0" ? "1" : "0"}${signature.slice(11)}` as Hex
    const tampered = { ...payload, payload: { ...payload.payload, signature: flipped } }
    expect(await facilitator.verify(tampered, requirements)).toMatchObject({
      isValid: false,
      invalidReason: "invalid_exact_evm_signature"
    })
    expect(await facilitator.settle(tampered, requirements)).toMatchObject({
      success: false,
      errorReason: "invalid_exact_evm_signature"
    })

    // The same signature malleated (s' = n - s, v flipped): ecrecover gives the payer, USDC refuses it.
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
    const highS = (n - BigInt(`0x${signature.slice(66, 130)}`)).toString(16).padStart(64, "0")
    const v = signature.slice(130) === "1b" ? "1c" : "1b"
    const malleated = {
      ...payload,
      payload: { ...payload.payload, signature: `${signature.slice(0, 66)}${highS}${v}` }
    }
    expect(await facilitator.verify(malleated, requirements)).toMatchObject({
      isValid: false,
      invalidReason: "invalid_exact_evm_transaction_simulation_failed"
    })
    expect(await facilitator.settle(malleated, requirements)).toMatchObject({
      success: false,
      errorReason: "invalid_exact_evm_signature"
    })

    const impostor = await pay(requirements, testWallet(generatePrivateKey()))
    const claimed = {
      ...impostor,
      payload: { ...impostor.payload, authorization: { ...eip3009(impostor).authorization, from: wallet.address } }
    }
    expect(await facilitator.verify(claimed, requirements)).toMatchObject({
      isValid: false,
      invalidReason: "invalid_exact_evm_signature"
    })
  })

  it("refuses an authorisation that has expired", async () => {
    // The client signs for maxTimeoutSeconds; one second is past what a facilitator accepts.
    const requirements = exact({ maxTimeoutSeconds: 1 })
    const payload = await pay(requirements)
    expect(await facilitator.verify(payload, requirements)).toMatchObject({
      isValid: false,
      invalidReason: "invalid_exact_evm_payload_authorization_valid_before"
    })
    expect(await facilitator.settle(payload, requirements)).toMatchObject({
      success: false,
      errorReason: "invalid_exact_evm_payload_authorization_valid_before"
    })
  })

  it("refuses a payment to another payee, on another network, in another asset, or below the price", async () => {
    const requirements = exact()
    const before = emulator.balanceOf(wallet.address)

    const elsewhere = await pay(exact({ payTo: getAddress("0x2222222222222222222222222222222222222222") }))
    expect(await facilitator.verify(elsewhere, requirements)).toMatchObject({
      isValid: false,
      invalidReason: "invalid_exact_evm_recipient_mismatch"
    })

    const onMainnet = exact({ network: "eip155:8453" })
    const mainnetPayment = await pay(onMainnet)
    expect(await facilitator.verify(mainnetPayment, onMainnet)).toMatchObject({
      isValid: false,
      invalidReason: "invalid_network"
    })
    expect(await facilitator.settle(mainnetPayment, onMainnet)).toMatchObject({
      success: false,
      errorReason: "invalid_network"
    })
    // Signed for another network than the one required: the accepted network does not match.
    expect(await facilitator.verify(mainnetPayment, requirements)).toMatchObject({
      isValid: false,
      invalidReason: "invalid_exact_evm_network_mismatch"
    })

    const otherToken = getAddress("0x3333333333333333333333333333333333333333")
    const inOtherToken = await pay(exact({ asset: otherToken }))
    // Signed over another token's EIP-712 domain: not a signature of this token's transfer.
    expect(await facilitator.verify(inOtherToken, requirements)).toMatchObject({
      isValid: false,
      invalidReason: "invalid_exact_evm_signature"
    })
    // A token the chain does not have: no contract at that address.
    expect(await facilitator.verify(inOtherToken, exact({ asset: otherToken }))).toMatchObject({
      isValid: false,
      invalidReason: "asset_not_deployed_contract"
    })

    const short = await pay(exact({ amount: "9999" }))
    expect(await facilitator.verify(short, requirements)).toMatchObject({
      isValid: false,
      invalidReason: "invalid_exact_evm_payload_authorization_value_mismatch"
    })
    expect(await facilitator.settle(short, requirements)).toMatchObject({
      success: false,
      errorReason: "invalid_exact_evm_payload_authorization_value_mismatch"
    })

    expect(emulator.balanceOf(wallet.address)).toBe(before)
  })

  it("refuses a payer without the funds, until it is funded", async () => {
    const poor = testWallet(generatePrivateKey())
    emulator.fund(poor.address, 9_999n)
    const requirements = exact()
    const payload = await pay(requirements, poor)
    expect(await facilitator.verify(payload, requirements)).toMatchObject({
      isValid: false,
      invalidReason: "invalid_exact_evm_insufficient_balance"
    })
    expect(await facilitator.settle(payload, requirements)).toMatchObject({
      success: false,
      errorReason: "invalid_exact_evm_insufficient_balance"
    })
    emulator.fund(poor.address, 1n)
    expect(await facilitator.verify(payload, requirements)).toMatchObject({ isValid: true })
    expect(await facilitator.settle(payload, requirements)).toMatchObject({ success: true })
    expect(emulator.balanceOf(poor.address)).toBe(0n)
  })
})

describe("exact (Permit2)", () => {
  it("settles through the Permit2 proxy when the asset asks for it, and needs Permit2's approval", async () => {
    const requirements = exact({
      extra: { name: emulator.asset.name, version: emulator.asset.version, assetTransferMethod: "permit2" }
    })
    const payload = await pay(requirements)
    expect(payload.payload).toHaveProperty("permit2Authorization")
    const before = emulator.balanceOf(wallet.address)
    expect(await facilitator.verify(payload, requirements)).toMatchObject({ isValid: true })
    expect(await facilitator.settle(payload, requirements)).toMatchObject({ success: true })
    expect(emulator.balanceOf(wallet.address)).toBe(before - 10_000n)
    expect(emulator.settlements().at(-1)).toMatchObject({ method: "permit2-exact", amount: 10_000n })
    expect(await facilitator.settle(payload, requirements)).toMatchObject({
      success: false,
      errorReason: "permit2_invalid_nonce"
    })

    const unapproved = testWallet(generatePrivateKey())
    emulator.fund(unapproved.address, 1_000_000n)
    emulator.setPermit2Allowance(unapproved.address, 0n)
    const refused = await pay(requirements, unapproved)
    expect(await facilitator.verify(refused, requirements)).toMatchObject({
      isValid: false,
      invalidReason: "permit2_allowance_required"
    })
  })
})

describe("upto (Permit2)", () => {
  it("authorises a maximum and settles the actual amount below it", async () => {
    const maximum = upto({ amount: "50000" })
    const payload = await pay(maximum)
    const before = emulator.balanceOf(wallet.address)
    expect(await facilitator.verify(payload, maximum)).toMatchObject({ isValid: true, payer: wallet.address })

    const settled = await facilitator.settle(payload, { ...maximum, amount: "35000" })
    expect(settled).toMatchObject({ success: true, amount: "35000" })
    expect(emulator.balanceOf(wallet.address)).toBe(before - 35_000n)
    expect(emulator.settlements().at(-1)).toMatchObject({ method: "permit2-upto", amount: 35_000n, to: payTo })
    // The Permit2 nonce is spent: the rest of the maximum cannot be taken afterwards.
    expect(await facilitator.settle(payload, { ...maximum, amount: "15000" })).toMatchObject({
      success: false,
      errorReason: "permit2_simulation_failed"
    })
    expect(emulator.balanceOf(wallet.address)).toBe(before - 35_000n)
  })

  it("settles 0, moving nothing", async () => {
    const maximum = upto({ amount: "50000" })
    const payload = await pay(maximum)
    const before = emulator.balanceOf(wallet.address)
    const count = emulator.settlements().length
    expect(await facilitator.settle(payload, { ...maximum, amount: "0" })).toMatchObject({
      success: true,
      amount: "0",
      transaction: ""
    })
    expect(emulator.balanceOf(wallet.address)).toBe(before)
    expect(emulator.settlements()).toHaveLength(count)
  })

  it("refuses more than the maximum, a maximum the payer cannot cover, and another facilitator's authorisation", async () => {
    const maximum = upto({ amount: "50000" })
    const payload = await pay(maximum)
    expect(await facilitator.settle(payload, { ...maximum, amount: "50001" })).toMatchObject({
      success: false,
      errorReason: "invalid_upto_evm_payload_settlement_exceeds_amount"
    })

    const poor = testWallet(generatePrivateKey())
    emulator.fund(poor.address, 49_999n)
    expect(await facilitator.verify(await pay(maximum, poor), maximum)).toMatchObject({
      isValid: false,
      invalidReason: "permit2_insufficient_balance"
    })

    const forAnother = upto({
      amount: "50000",
      extra: { facilitatorAddress: "0x4444444444444444444444444444444444444444" }
    })
    expect(await facilitator.verify(await pay(forAnother), forAnother)).toMatchObject({
      isValid: false,
      invalidReason: "upto_facilitator_mismatch"
    })
  })
})

describe("the wire", () => {
  it("answers a body without a payment 400, and counts the requests it received", async () => {
    const response = await fetch(`${emulator.url}/verify`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}"
    })
    expect(response.status).toBe(400)
    expect(emulator.requests().filter((r) => r.path === "/settle").length).toBeGreaterThan(0)
  })

  it("refuses, as a refusal, a scheme or an x402 version it does not serve, and a payload it cannot read", async () => {
    const requirements = exact()
    const payload = await pay(requirements)
    expect(await facilitator.verify(payload, { ...requirements, scheme: "batch-settlement" })).toMatchObject({
      isValid: false,
      invalidReason: "unsupported_scheme"
    })
    expect(await facilitator.verify({ ...payload, x402Version: 1 }, requirements)).toMatchObject({
      isValid: false,
      invalidReason: "invalid_x402_version"
    })
    expect(await facilitator.settle({ ...payload, x402Version: 1 }, requirements)).toMatchObject({
      success: false,
      errorReason: "invalid_x402_version"
    })
    // A payload the scheme cannot read (its authorisation missing) is refused, not a 500.
    const unreadable = { ...payload, payload: { signature: eip3009(payload).signature } }
    expect(await facilitator.verify(unreadable, requirements)).toMatchObject({
      isValid: false,
      invalidReason: "invalid_payload"
    })
    expect(await facilitator.settle(unreadable, requirements)).toMatchObject({
      success: false,
      errorReason: "invalid_payload"
    })
  })

  it("fails a settlement with 500, or holds it, when told to", async () => {
    emulator.trouble("/settle", "500")
    const requirements = exact()
    const payload = await pay(requirements)
    await expect(facilitator.settle(payload, requirements)).rejects.toThrow(/500/)
    emulator.trouble("/settle", "hang")
    const impatient = new HTTPFacilitatorClient({ url: emulator.url, timeoutMs: 300 })
    await expect(impatient.settle(payload, requirements)).rejects.toThrow(/timed out|timeout/i)
    // Neither moved anything; the next settlement of the same payment goes through.
    expect(await facilitator.settle(payload, requirements)).toMatchObject({ success: true })
  })
})
