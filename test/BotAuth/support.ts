import { component, verifySignature } from "http-message-sig"
import { expect } from "vitest"
import { HTTP_MESSAGE_SIGNATURE_TAG, jwkToKeyID } from "web-bot-auth"
import { helpers, verifierFromJWK } from "web-bot-auth/crypto"
import type { SeenRequest } from "../support/fakeProvider.js"
import { request } from "../support/server.js"

/**
 * A provider's side of Web Bot Auth: the service's key directory fetched and its own
 * signatures checked, and a request the fake provider received verified against it with the
 * `web-bot-auth` library's Ed25519 verifier (the RFC 9421 signature base rebuilt by
 * `http-message-sig`, the library it is built on, whose current version reads the
 * dictionary form of `Signature-Agent`).
 */
export interface DirectoryJwk {
  readonly kty: "OKP"
  readonly crv: "Ed25519"
  readonly x: string
  readonly kid: string
  readonly use: string
  readonly nbf: number
  readonly exp: number
}

const DIRECTORY_PATH = "/.well-known/http-message-signatures-directory"

/** The `web-bot-auth` verifier for one published key, as `http-message-sig` calls verifiers. */
const webBotAuthVerifier = async (jwk: DirectoryJwk) => {
  const check = await verifierFromJWK(jwk)
  return {
    algorithm: "ed25519",
    verify: (data: Uint8Array, signature: Uint8Array) =>
      Promise.resolve(check(new TextDecoder().decode(data), signature, undefined as never)).then(
        () => true,
        () => false
      )
  }
}

/** The key's JWK thumbprint as `web-bot-auth` computes it (what `keyid` must be). */
const thumbprintOf = (jwk: DirectoryJwk) =>
  jwkToKeyID({ kty: jwk.kty, crv: jwk.crv, x: jwk.x }, helpers.WEBCRYPTO_SHA256, helpers.BASE64URL_DECODE)

/** A directory as answered: its headers by name, and its body. */
export interface DirectoryAnswer {
  readonly header: (name: string) => string | null | undefined
  readonly body: string
}

/**
 * Checks what the draft asks of a directory answered to a request for `url`: its media
 * type, a `Content-Digest` of the body, and one signature per key over `@authority;req` and
 * the digest, tagged `http-message-signatures-directory`, valid at `nowSeconds`. Answers
 * its keys and its `Cache-Control`.
 */
export const checkDirectory = async (url: string, answer: DirectoryAnswer, nowSeconds: number) => {
  expect(answer.header("content-type")).toBe("application/http-message-signatures-directory+json")
  const body = answer.body
  const digest = Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(body))).toString("base64")
  expect(answer.header("content-digest")).toBe(`sha-256=:${digest}:`)
  const keys = (JSON.parse(body) as { keys: Array<DirectoryJwk> }).keys
  for (const jwk of keys) expect(jwk.kid).toBe(await thumbprintOf(jwk))
  const response = {
    kind: "response" as const,
    status: 200,
    fields: ["content-digest", "signature", "signature-input"].map((name) => ({
      name,
      value: answer.header(name) ?? ""
    })),
    request: { kind: "request" as const, method: "GET", targetUri: url, fields: [] }
  }
  const signedBy: Array<string> = []
  for (let index = 0; index < keys.length; index++) {
    const verified = await verifySignature(response, {
      label: `binding${index}`,
      policy: {
        algorithms: ["ed25519"],
        requiredComponents: [component("@authority", { req: true }), "content-digest"],
        requiredParameters: ["created", "expires", "keyid", "tag"],
        now: nowSeconds
      },
      resolveVerifier: (candidate) => {
        const jwk = keys.find((key) => key.kid === candidate.parameters.keyid)
        if (jwk === undefined) throw new Error(`no key ${String(candidate.parameters.keyid)}`)
        return webBotAuthVerifier(jwk)
      }
    })
    expect(verified.parameters.tag).toBe("http-message-signatures-directory")
    signedBy.push(String(verified.parameters.keyid))
  }
  expect(signedBy.sort()).toEqual(keys.map((key) => key.kid).sort())
  return { keys, cacheControl: answer.header("cache-control") ?? null }
}

/** Reads the directory the service at `serverUrl` publishes (200) and checks it (`checkDirectory`). */
export const fetchDirectory = async (serverUrl: string, nowSeconds: number) => {
  const url = `${serverUrl}${DIRECTORY_PATH}`
  const res = await request(url)
  expect(res.status).toBe(200)
  return checkDirectory(url, { header: (name) => res.headers.get(name), body: res.text }, nowSeconds)
}

const header = (seen: SeenRequest, name: string) => {
  const value = seen.headers[name]
  return Array.isArray(value) ? value.join(", ") : value
}

/** Whether the request carries any of the three Web Bot Auth headers. */
export const isSigned = (seen: SeenRequest) =>
  ["signature", "signature-input", "signature-agent"].some((name) => header(seen, name) !== undefined)

/**
 * Verifies a request the fake provider received, as a provider would: the signature over
 * `@authority` (the Host it was sent to) and the `Signature-Agent` member of its label, by a
 * key of the directory, tagged `web-bot-auth`, valid at `nowSeconds`. Answers the key's id
 * and the agent named.
 */
export const verifyReceived = async (seen: SeenRequest, keys: ReadonlyArray<DirectoryJwk>, nowSeconds: number) => {
  const fields = ["signature", "signature-input", "signature-agent"].map((name) => ({
    name,
    value: header(seen, name) ?? ""
  }))
  const message = {
    kind: "request" as const,
    method: seen.method,
    targetUri: `http://${header(seen, "host")}${seen.url}`,
    fields
  }
  const verified = await verifySignature(message, {
    label: "sig1",
    policy: {
      algorithms: ["ed25519"],
      requiredComponents: ["@authority", component("signature-agent", { key: "sig1" })],
      requiredParameters: ["created", "expires", "keyid", "tag", "nonce"],
      now: nowSeconds
    },
    resolveVerifier: (candidate) => {
      const jwk = keys.find((key) => key.kid === candidate.parameters.keyid)
      if (jwk === undefined) throw new Error(`no key ${String(candidate.parameters.keyid)} in the directory`)
      return webBotAuthVerifier(jwk)
    }
  })
  expect(verified.parameters.tag).toBe(HTTP_MESSAGE_SIGNATURE_TAG)
  const { created, expires } = verified.parameters
  expect(Number(expires) - Number(created)).toBeLessThanOrEqual(24 * 60 * 60)
  return { kid: String(verified.parameters.keyid), agent: header(seen, "signature-agent") }
}
