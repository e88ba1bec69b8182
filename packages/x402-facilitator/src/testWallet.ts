import { type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts"

/**
 * The test wallet: the first account of the well-known development mnemonic ("test test … junk")
 * that Hardhat and Anvil print, address 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266. Everyone
 * knows its key, so it holds nothing on a real chain worth keeping: use it only with the emulator.
 */
export const TEST_WALLET_PRIVATE_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80" as const

/**
 * The facilitator's own account on the emulated chain (the mnemonic's second account): it sends
 * the settlement transactions, and an `upto` authorisation names it as the only one allowed to.
 */
export const EMULATOR_FACILITATOR_ADDRESS = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" as const

/** A wallet that signs payments: the test wallet, or the account of the key given. */
export const testWallet = (privateKeyHex: `0x${string}` = TEST_WALLET_PRIVATE_KEY): PrivateKeyAccount =>
  privateKeyToAccount(privateKeyHex)
