export { type Behaviour, cardByNumber, testCards } from "./cards.js"
export {
  EMULATOR_PUBLISHABLE_KEY,
  EMULATOR_SECRET_KEY,
  EMULATOR_WEBHOOK_SECRET,
  type EmulatorOptions,
  startStripeEmulator,
  type StripeEmulator,
  type Trouble
} from "./emulator.js"
export { signatureHeader, type StoredEvent } from "./events.js"
