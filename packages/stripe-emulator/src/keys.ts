/** The emulator's keys: fixed, since it moves no money and listens on loopback only. */
export const EMULATOR_SECRET_KEY = "sk_test_emulator"
export const EMULATOR_PUBLISHABLE_KEY = "pk_test_emulator"
export const EMULATOR_WEBHOOK_SECRET = "whsec_emulator"
