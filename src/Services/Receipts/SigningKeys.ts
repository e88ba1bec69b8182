import { Clock, Config, Effect, Option, SynchronizedRef } from "effect"
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from "jose"
import { type PublishedKey, SIGNING_ALG, type SigningKey } from "../../Domain/SigningKey.js"
import { SecretBox } from "../SecretBox/SecretBox.js"
import { SigningKeysRepo } from "./SigningKeysRepo.js"

/**
 * The Ed25519 keys that sign receipts and call records.
 *
 * The newest key signs until it is RECEIPT_KEY_ROTATION_DAYS old (default 90); the first
 * signature after that makes the next generation (one process wins the generation, the
 * others read its key). Every key stays published in the JWKS, so a signature kept by a
 * customer can be checked for as long as they keep it. The private key is stored only sealed
 * by the secret box and held in memory as a non-extractable CryptoKey; it is never logged.
 */
export interface ActiveKey {
  readonly kid: string
  readonly generation: number
  readonly createdAt: Date
  readonly privateKey: CryptoKey
}

const DAY_MS = 24 * 60 * 60 * 1000

// Signing with the service's own key cannot fail short of a bug: a rejection is a defect.
const makeKeyPair = Effect.promise(async () => {
  const pair = await generateKeyPair(SIGNING_ALG, { crv: "Ed25519", extractable: true })
  const publicJwk = await exportJWK(pair.publicKey)
  return {
    publicJwk: { kty: "OKP" as const, crv: "Ed25519" as const, x: publicJwk.x! },
    privateJwk: await exportJWK(pair.privateKey),
    kid: await calculateJwkThumbprint(publicJwk, "sha256")
  }
})

export { SIGNING_ALG }

export class SigningKeys extends Effect.Service<SigningKeys>()("Receipts/SigningKeys", {
  dependencies: [SigningKeysRepo.Default, SecretBox.Default],
  effect: Effect.gen(function*() {
    const repo = yield* SigningKeysRepo
    const box = yield* SecretBox
    const rotationDays = yield* Config.integer("RECEIPT_KEY_ROTATION_DAYS").pipe(Config.withDefault(90))
    const rotationMs = Math.max(1, rotationDays) * DAY_MS

    const activate = (row: SigningKey) =>
      Effect.gen(function*() {
        const privateJwk = JSON.parse(yield* Effect.orDie(box.open(row.private_sealed))) as JWK
        const privateKey = yield* Effect.promise(() => importJWK(privateJwk, SIGNING_ALG, { extractable: false }))
        return {
          kid: row.kid,
          generation: row.generation,
          createdAt: row.created_at,
          privateKey: privateKey as CryptoKey
        }
      })

    const isDue = (createdAt: Date, now: number) => createdAt.getTime() + rotationMs <= now

    /** Makes the generation after `previous`, unless another process made it first; answers the newest. */
    const rotate = (previous: number, now: number) =>
      Effect.gen(function*() {
        const pair = yield* makeKeyPair
        const made = yield* repo.insert({
          kid: pair.kid,
          generation: previous + 1,
          public_jwk: pair.publicJwk,
          private_sealed: yield* box.seal(JSON.stringify(pair.privateJwk)),
          created_at: new Date(now)
        })
        if (made) yield* Effect.annotateLogs(Effect.logInfo("Receipt signing key made"), { generation: previous + 1 })
        const newest = yield* repo.newest
        return newest ?? (yield* Effect.dieMessage("A signing key was written but none is found"))
      })

    // The active key, read or made once per process and again when it is due for rotation.
    const cache = yield* SynchronizedRef.make(Option.none<ActiveKey>())

    const refresh: Effect.Effect<ActiveKey> = SynchronizedRef.modifyEffect(cache, (held) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        if (Option.isSome(held) && !isDue(held.value.createdAt, now)) return [held.value, held] as const
        let row = yield* repo.newest
        if (row === undefined || isDue(row.created_at, now)) row = yield* rotate(row?.generation ?? 0, now)
        const key = yield* activate(row)
        return [key, Option.some(key)] as const
      }))

    // The held key is read without the lock; only a missing or due key takes it.
    const active: Effect.Effect<ActiveKey> = Effect.flatMap(
      Effect.zip(SynchronizedRef.get(cache), Clock.currentTimeMillis),
      ([held, now]) => Option.isSome(held) && !isDue(held.value.createdAt, now) ? Effect.succeed(held.value) : refresh
    )

    /** Every key ever made (the active one included, made now if need be), newest first, as a JWKS publishes them. */
    const published = Effect.map(
      Effect.zipRight(active, repo.all),
      (rows) => rows.map((row): PublishedKey => ({ ...row.public_jwk, kid: row.kid, alg: SIGNING_ALG, use: "sig" }))
    )

    return { active, published } as const
  })
}) {}
