import { Effect } from "effect"
import { createCipheriv, createDecipheriv, randomBytes, scrypt, type ScryptOptions, timingSafeEqual } from "node:crypto"

/**
 * Administrator passwords: scrypt (N=2^15, r=8, p=1, 16-byte salt, 32-byte key), stored as
 * `scrypt$N$r$p$<salt>$<hash>` in base64url. `seal`/`unseal` protect a small secret (the
 * TOTP secret) with AES-256-GCM under a second scrypt key of the password, so the stored
 * row reveals nothing without the password.
 */
export const MIN_ADMIN_PASSWORD_LENGTH = 14

const PARAMS = { N: 2 ** 15, r: 8, p: 1 } as const
const KEY_LENGTH = 32

const derive = (password: string, salt: Buffer, params: { N: number; r: number; p: number }) =>
  Effect.async<Buffer>((resume) => {
    const options: ScryptOptions = { ...params, maxmem: 128 * params.N * params.r * 2 }
    scrypt(
      password.normalize("NFKC"),
      salt,
      KEY_LENGTH,
      options,
      (error, key) => resume(error ? Effect.die(error) : Effect.succeed(key))
    )
  })

export const hashPassword = (password: string) =>
  Effect.gen(function*() {
    const salt = randomBytes(16)
    const key = yield* derive(password, salt, PARAMS)
    return `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${salt.toString("base64url")}$${key.toString("base64url")}`
  })

export const verifyPassword = (password: string, stored: string) =>
  Effect.gen(function*() {
    const [scheme, n, r, p, salt, hash] = stored.split("$")
    if (scheme !== "scrypt" || !n || !r || !p || !salt || !hash) return false
    const expected = Buffer.from(hash, "base64url")
    const key = yield* derive(password, Buffer.from(salt, "base64url"), { N: Number(n), r: Number(r), p: Number(p) })
    return key.length === expected.length && timingSafeEqual(key, expected)
  })

/** A stored hash of a random password, so unknown emails cost the same time as known ones. */
export const decoyHash = Effect.runSync(Effect.cached(hashPassword(randomBytes(24).toString("base64url"))))

export const seal = (password: string, plaintext: string) =>
  Effect.gen(function*() {
    const salt = randomBytes(16)
    const key = yield* derive(password, salt, PARAMS)
    const iv = randomBytes(12)
    const cipher = createCipheriv("aes-256-gcm", key, iv)
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
    const tag = cipher.getAuthTag()
    return ["v1", salt, iv, tag, body].map((part) => (typeof part === "string" ? part : part.toString("base64url")))
      .join("$")
  })

/** The sealed secret, or undefined when the password is not the one it was sealed with. */
export const unseal = (password: string, sealed: string) =>
  Effect.gen(function*() {
    const [version, salt, iv, tag, body] = sealed.split("$")
    if (version !== "v1" || !salt || !iv || !tag || !body) return undefined
    const key = yield* derive(password, Buffer.from(salt, "base64url"), PARAMS)
    try {
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"))
      decipher.setAuthTag(Buffer.from(tag, "base64url"))
      return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8")
    } catch {
      return undefined
    }
  })
