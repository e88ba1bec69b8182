import { Clock, Effect } from "effect"
import { component, createSignatureSync } from "http-message-sig"
import { createHash } from "node:crypto"
import { BotKeys } from "./BotKeys.js"
import { ed25519Signer } from "./RequestSignature.js"

/** Where the key directory is served (the draft's well-known URI) and its media type. */
export const KEY_DIRECTORY_PATH = "/.well-known/http-message-signatures-directory"
export const KEY_DIRECTORY_MEDIA_TYPE = "application/http-message-signatures-directory+json"
export const DIRECTORY_SIGNATURE_TAG = "http-message-signatures-directory"
/** How long a verifier may keep the directory: well within the day a new key is published ahead. */
export const KEY_DIRECTORY_MAX_AGE_SECONDS = 3600

const DIRECTORY_COMPONENTS = [component("@authority", { req: true }), "content-digest"]

export interface SignedDirectory {
  readonly body: string
  readonly headers: Readonly<Record<string, string>>
}

/**
 * The HTTP Message Signatures directory (a JWKS of the request signing keys) and its proof
 * of possession: one RFC 9421 signature per listed key over the authority it was fetched
 * from (`@authority;req`) and the body's `Content-Digest`, tagged
 * `http-message-signatures-directory`, valid until that key leaves the directory.
 */
export class KeyDirectory extends Effect.Service<KeyDirectory>()("BotAuth/KeyDirectory", {
  dependencies: [BotKeys.Default],
  effect: Effect.gen(function*() {
    const keys = yield* BotKeys

    /** The directory as answered to a request for `requestUrl` (its authority is signed). */
    const signedFor = (requestUrl: string): Effect.Effect<SignedDirectory> =>
      Effect.gen(function*() {
        const listed = yield* keys.listed
        const created = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        const body = JSON.stringify({ keys: listed.map((key) => key.jwk) })
        const contentDigest = `sha-256=:${createHash("sha256").update(body, "utf8").digest("base64")}:`
        const response = {
          kind: "response" as const,
          status: 200,
          fields: [{ name: "content-digest", value: contentDigest }],
          request: { kind: "request" as const, method: "GET", targetUri: requestUrl, fields: [] }
        }
        const signatures = listed.map((key, index) =>
          createSignatureSync(response, {
            label: `binding${index}`,
            components: DIRECTORY_COMPONENTS,
            parameters: {
              created,
              expires: Math.floor(key.expiresAt.getTime() / 1000),
              keyid: key.kid,
              tag: DIRECTORY_SIGNATURE_TAG
            },
            signer: ed25519Signer(key.privateKey)
          })
        )
        return {
          body,
          headers: {
            "content-type": KEY_DIRECTORY_MEDIA_TYPE,
            "cache-control": `max-age=${KEY_DIRECTORY_MAX_AGE_SECONDS}`,
            "access-control-allow-origin": "*",
            "content-digest": contentDigest,
            signature: signatures.map((fields) => fields.signature).join(", "),
            "signature-input": signatures.map((fields) => fields.signatureInput).join(", ")
          }
        }
      })

    return { signedFor } as const
  })
}) {}
