export { type Settlement, type TokenInfo } from "./chain.js"
export { type Address, MULTICALL3_ADDRESS } from "./contracts.js"
export {
  DEFAULT_NETWORK,
  DEFAULT_TEST_WALLET_FUNDING,
  type FacilitatorEmulator,
  type FacilitatorEmulatorOptions,
  type ReceivedRequest,
  startFacilitatorEmulator,
  type Trouble
} from "./emulator.js"
export { EMULATOR_FACILITATOR_ADDRESS, TEST_WALLET_PRIVATE_KEY, testWallet } from "./testWallet.js"
