import { Config, Effect, Option, Redacted } from "effect"
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto"
import { AppConfig } from "../AppConfig.js"

/**
 * Encryption at rest for values the service must read back (webhook signing secrets, the
 * bodies of queued mails, which may carry one-time links): AES-256-GCM under a key derived
 * (SHA-256) from SECRETS_ENCRYPTION_KEY. Stored form: `v1.<base64url(iv | tag | ciphertext)>`.
 *
 * Without SECRETS_ENCRYPTION_KEY a fixed development key is used in development; with
 * SERVICE_ENV=production the service does not start without it.
 */
const DEVELOPMENT_KEY = "agent-gateway development key (set SECRETS_ENCRYPTION_KEY)"

export class SecretBoxError extends Error {
  readonly _tag = "SecretBoxError"
}

export const makeSecretBox = (keyMaterial: string) => {
  const key = createHash("sha256").update(keyMaterial, "utf8").digest()
  const seal = (plain: string): string => {
    const iv = randomBytes(12)
    const cipher = createCipheriv("aes-256-gcm", key, iv)
    const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()])
    return `v1.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url")}`
  }
  const open = (sealed: string): string => {
    if (!sealed.startsWith("v1.")) throw new SecretBoxError("Unknown sealed value format")
    const raw = Buffer.from(sealed.slice(3), "base64url")
    const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12))
    decipher.setAuthTag(raw.subarray(12, 28))
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8")
  }
  return { seal, open } as const
}

export class SecretBox extends Effect.Service<SecretBox>()("SecretBox/SecretBox", {
  effect: Effect.gen(function*() {
    const config = yield* AppConfig
    // Production refuses to start without a key of its own (a missing key is a ConfigError).
    const configured = config.isProduction
      ? Option.some(yield* Config.redacted("SECRETS_ENCRYPTION_KEY"))
      : yield* Config.option(Config.redacted("SECRETS_ENCRYPTION_KEY"))
    if (Option.isNone(configured)) {
      yield* Effect.logDebug(
        "SECRETS_ENCRYPTION_KEY is not set: webhook secrets and queued mails are encrypted with the development key"
      )
    }
    const box = makeSecretBox(Option.match(configured, { onNone: () => DEVELOPMENT_KEY, onSome: Redacted.value }))
    return {
      seal: (plain: string) => Effect.sync(() => box.seal(plain)),
      /** A value that cannot be opened (wrong key, tampering) is a defect: the key was changed. */
      open: (sealed: string) => Effect.try({ try: () => box.open(sealed), catch: (e) => new SecretBoxError(String(e)) })
    } as const
  })
}) {}
