import { type KeyObject, randomFillSync, sign } from "node:crypto"

/**
 * Web Bot Auth's request signature (RFC 9421 as the IETF Web Bot Auth protocol draft
 * profiles it): over `@authority` and the `Signature-Agent` member of its label, with
 * `created`, `expires`, `keyid` (the key's JWK thumbprint), `alg`, a fresh `nonce` and
 * `tag="web-bot-auth"`. `Signature-Agent` is the dictionary form the draft asks signers to
 * send: the label keyed to the service's origin, where verifiers find the key directory.
 *
 * The signature base has one fixed shape, so it is written here directly: the general
 * RFC 9421 library (`http-message-sig`, which makes the directory's signatures) parses and
 * checks every part of a message first, which cost as much as the Ed25519 signature itself
 * on every provider call. `requestSignature.test.ts` proves both give the same bytes.
 */
export const WEB_BOT_AUTH_TAG = "web-bot-auth"
export const SIGNATURE_LABEL = "sig1"
export const SIGNATURE_ALGORITHM = "ed25519"
/** How long a request signature is valid: long enough for clock skew, short enough to bound a replay. */
export const SIGNATURE_LIFETIME_SECONDS = 300
/** Random bytes of each signature's nonce (base64, as the `web-bot-auth` library makes them). */
export const NONCE_BYTES = 64

/** The private key imported once (a `KeyObject`), with its `keyid`. */
export interface RequestSigningKey {
  readonly kid: string
  readonly privateKey: KeyObject
}

/** What the signature covers and says, besides the key. */
export interface RequestSignatureInput {
  readonly url: string
  /** The service's origin, where its key directory is served. */
  readonly agentOrigin: string
  readonly nowMs: number
  readonly nonce: string
}

/** A Structured Field string (an origin holds no `"` or `\`, but a setting might). */
const sfString = (text: string) => `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`

/** The `Signature-Agent` field: the signature's label keyed to the origin serving the directory. */
export const signatureAgentField = (origin: string) => `${SIGNATURE_LABEL}=${sfString(origin)}`

const COVERED = `("@authority" "signature-agent";key="${SIGNATURE_LABEL}")`

/** Nonces cut from one buffer of random bytes, refilled when used up (one system call per 1024). */
const noncePool = Buffer.alloc(NONCE_BYTES * 1024)
let noncePoolOffset = noncePool.length

export const freshNonce = (): string => {
  if (noncePoolOffset === noncePool.length) {
    randomFillSync(noncePool)
    noncePoolOffset = 0
  }
  const nonce = noncePool.toString("base64", noncePoolOffset, noncePoolOffset + NONCE_BYTES)
  noncePoolOffset += NONCE_BYTES
  return nonce
}

/** Node's Ed25519 as the RFC 9421 library's signer (synchronous: no promise per signature). */
export const ed25519Signer = (privateKey: KeyObject) => ({
  algorithm: SIGNATURE_ALGORITHM,
  sign: (data: Uint8Array): Uint8Array => sign(null, data, privateKey)
})

/** The three headers of one signed request. Nothing else of the request is covered. */
export const signRequest = (
  key: RequestSigningKey,
  input: RequestSignatureInput
): Readonly<Record<"signature" | "signature-input" | "signature-agent", string>> => {
  const created = Math.floor(input.nowMs / 1000)
  // RFC 9421 2.2.3: the target's host, lower case, with its port unless the scheme's default.
  const authority = new URL(input.url).host
  const agentValue = sfString(input.agentOrigin)
  const expires = created + SIGNATURE_LIFETIME_SECONDS
  const params = `${COVERED};created=${created};expires=${expires};keyid=${sfString(key.kid)}` +
    `;alg="${SIGNATURE_ALGORITHM}";nonce=${sfString(input.nonce)};tag="${WEB_BOT_AUTH_TAG}"`
  const base = `"@authority": ${authority}\n"signature-agent";key="${SIGNATURE_LABEL}": ${agentValue}\n` +
    `"@signature-params": ${params}`
  const signature = sign(null, Buffer.from(base, "utf8"), key.privateKey).toString("base64")
  return {
    signature: `${SIGNATURE_LABEL}=:${signature}:`,
    "signature-input": `${SIGNATURE_LABEL}=${params}`,
    "signature-agent": `${SIGNATURE_LABEL}=${agentValue}`
  }
}
