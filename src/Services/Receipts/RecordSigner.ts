import { Effect } from "effect"
import { FlattenedSign } from "jose"
import { jcs } from "./Jcs.js"
import { SIGNING_ALG, SigningKeys } from "./SigningKeys.js"

/**
 * Signs a record (a receipt, a gateway call, a dispute) as the API answers it: a detached JWS
 * (RFC 7515 appendix F) with EdDSA over the RFC 8785 canonical form of the record without its
 * `signature` member. A verifier removes `signature`, canonicalises what is left, and checks the
 * JWS with the key named by `kid` in `/.well-known/jwks.json`.
 *
 * Signing happens when a record is read: Ed25519 signatures are deterministic, so the same
 * facts under the same key always give the same signature, and nothing is added to the
 * paths that buy or call (docs/decisions.md, "Receipts").
 */
export interface RecordSignature {
  readonly alg: typeof SIGNING_ALG
  readonly kid: string
  readonly jws: string
}

const encoder = new TextEncoder()

export class RecordSigner extends Effect.Service<RecordSigner>()("Receipts/RecordSigner", {
  dependencies: [SigningKeys.Default],
  effect: Effect.gen(function*() {
    const keys = yield* SigningKeys

    const signatureOf = (record: object) =>
      Effect.gen(function*() {
        const key = yield* keys.active
        const payload = encoder.encode(jcs(record))
        const jws = yield* Effect.promise(() =>
          new FlattenedSign(payload).setProtectedHeader({ alg: SIGNING_ALG, kid: key.kid }).sign(key.privateKey)
        )
        return { alg: SIGNING_ALG, kid: key.kid, jws: `${jws.protected}..${jws.signature}` } satisfies RecordSignature
      })

    /** The record with its `signature`. */
    const signed = <A extends object>(record: A) =>
      Effect.map(signatureOf(record), (signature) => ({ ...record, signature }))

    return { signed } as const
  })
}) {}
