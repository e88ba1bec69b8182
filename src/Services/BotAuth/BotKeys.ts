import { Clock, Config, Effect, Option, SynchronizedRef } from "effect"
import { calculateJwkThumbprint } from "jose"
import { createPrivateKey, generateKeyPairSync, type KeyObject } from "node:crypto"
import type { BotSigningKey, DirectoryKey } from "../../Domain/BotSigningKey.js"
import { SecretBox } from "../SecretBox/SecretBox.js"
import { BotKeysRepo } from "./BotKeysRepo.js"
import { SIGNATURE_LIFETIME_SECONDS } from "./RequestSignature.js"

/**
 * The Ed25519 keys that sign the service's requests to providers (Web Bot Auth).
 *
 * A key signs for BOT_AUTH_KEY_ROTATION_DAYS (default 30). Its successor is made a day
 * before that ends (by the first signature or directory read in that day) and published at
 * once, so a verifier holding a cached directory knows it before it signs; the old key stays
 * published until its last signature has expired, then leaves the directory. The private key
 * is stored only sealed by the secret box and imported once per process as a `KeyObject`;
 * it is never logged.
 */
const DAY_MS = 24 * 60 * 60 * 1000
/** How long before it signs a new key is published. */
export const PUBLISHED_AHEAD_MS = DAY_MS
const SIGNATURE_LIFETIME_MS = SIGNATURE_LIFETIME_SECONDS * 1000
/**
 * A key made now signs from this long before: the replicas that lose the race to make it read
 * the winner's key, made at the winner's clock, which may be ahead of theirs by the race's
 * milliseconds or a machine's drift. No key signs before its predecessor's end.
 */
export const CLOCK_ALLOWANCE_MS = 60_000

/** The key signing now, imported, and when this process must look again. */
export interface ActiveBotKey {
  readonly kid: string
  readonly generation: number
  readonly privateKey: KeyObject
  /** Past this instant the key may no longer be the one to sign, or its successor is due. */
  readonly recheckAt: number
}

/** A published key with its private half, for the directory's own signatures. */
export interface ListedBotKey {
  readonly jwk: DirectoryKey
  readonly kid: string
  readonly privateKey: KeyObject
  readonly expiresAt: Date
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000)

export class BotKeys extends Effect.Service<BotKeys>()("BotAuth/BotKeys", {
  dependencies: [BotKeysRepo.Default, SecretBox.Default],
  effect: Effect.gen(function*() {
    const repo = yield* BotKeysRepo
    const box = yield* SecretBox
    const rotationDays = yield* Config.integer("BOT_AUTH_KEY_ROTATION_DAYS").pipe(Config.withDefault(30))
    const rotationMs = Math.max(1, rotationDays) * DAY_MS

    /** A new generation signing from `signsFrom`; its kid is the RFC 7638 thumbprint. */
    const makeKey = (generation: number, now: number, signsFrom: number) =>
      Effect.gen(function*() {
        const pair = generateKeyPairSync("ed25519")
        const publicJwk = pair.publicKey.export({ format: "jwk" })
        const x = publicJwk.x ?? (yield* Effect.dieMessage("An Ed25519 public key exported without x"))
        const kid = yield* Effect.promise(() => calculateJwkThumbprint({ kty: "OKP", crv: "Ed25519", x }, "sha256"))
        const signsUntil = signsFrom + rotationMs
        const made = yield* repo.insert({
          kid,
          generation,
          public_jwk: { kty: "OKP", crv: "Ed25519", x },
          private_sealed: yield* box.seal(JSON.stringify(pair.privateKey.export({ format: "jwk" }))),
          created_at: new Date(now),
          signs_from: new Date(signsFrom),
          signs_until: new Date(signsUntil),
          expires_at: new Date(signsUntil + SIGNATURE_LIFETIME_MS)
        })
        if (made) yield* Effect.annotateLogs(Effect.logInfo("Request signing key made"), { generation })
      })

    /**
     * Every key, newest first, after making what is due at `now`: the first key, or the
     * successor of the newest once it is within a day of its end (signing from that end, or
     * from now, less the clock allowance, when the service was not running then). A unique
     * generation lets one process win.
     */
    const keysAt = (now: number) =>
      Effect.gen(function*() {
        const rows = yield* repo.all
        const newest = rows[0]
        if (newest !== undefined && now < newest.signs_until.getTime() - PUBLISHED_AHEAD_MS) return rows
        const earliest = now - CLOCK_ALLOWANCE_MS
        yield* makeKey(
          (newest?.generation ?? 0) + 1,
          now,
          newest === undefined ? earliest : Math.max(earliest, newest.signs_until.getTime())
        )
        return yield* repo.all
      })

    // Private keys are opened and imported once per process (a handful: one per rotation).
    const imported = new Map<string, KeyObject>()
    const privateKeyOf = (row: BotSigningKey) =>
      Effect.gen(function*() {
        const held = imported.get(row.kid)
        if (held !== undefined) return held
        const jwk = JSON.parse(yield* Effect.orDie(box.open(row.private_sealed))) as Record<string, unknown>
        const key = createPrivateKey({ key: jwk, format: "jwk" })
        imported.set(row.kid, key)
        return key
      })

    const signingAt = (rows: ReadonlyArray<BotSigningKey>, now: number) =>
      rows.find((row) => row.signs_from.getTime() <= now && now < row.signs_until.getTime())

    // The active key, read or made once per process and again when it is due.
    const cache = yield* SynchronizedRef.make(Option.none<ActiveBotKey>())

    const refresh: Effect.Effect<ActiveBotKey> = SynchronizedRef.modifyEffect(cache, (held) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        if (Option.isSome(held) && now < held.value.recheckAt) return [held.value, held] as const
        const rows = yield* keysAt(now)
        const row = signingAt(rows, now) ?? (yield* Effect.dieMessage("No request signing key covers now"))
        const hasSuccessor = rows[0]!.generation > row.generation
        const key: ActiveBotKey = {
          kid: row.kid,
          generation: row.generation,
          privateKey: yield* privateKeyOf(row),
          recheckAt: hasSuccessor ? row.signs_until.getTime() : row.signs_until.getTime() - PUBLISHED_AHEAD_MS
        }
        return [key, Option.some(key)] as const
      }))

    /** The key that signs now; the held key is read without the lock, only a due one takes it. */
    const active: Effect.Effect<ActiveBotKey> = Effect.flatMap(
      Effect.zip(SynchronizedRef.get(cache), Clock.currentTimeMillis),
      ([held, now]) => Option.isSome(held) && now < held.value.recheckAt ? Effect.succeed(held.value) : refresh
    )

    /**
     * The keys the directory lists now: the one signing, a successor already made, and older
     * ones until their last signature has expired. Newest first.
     */
    const listed: Effect.Effect<ReadonlyArray<ListedBotKey>> = Effect.gen(function*() {
      yield* active
      const now = yield* Clock.currentTimeMillis
      const rows = (yield* repo.all).filter((row) => row.expires_at.getTime() > now)
      return yield* Effect.forEach(rows, (row) =>
        Effect.map(privateKeyOf(row), (privateKey): ListedBotKey => ({
          jwk: {
            ...row.public_jwk,
            kid: row.kid,
            use: "sig",
            nbf: seconds(row.signs_from),
            exp: seconds(row.expires_at)
          },
          kid: row.kid,
          privateKey,
          expiresAt: row.expires_at
        })))
    })

    return { active, listed } as const
  })
}) {}
