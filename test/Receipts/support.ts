import {
  createLocalJWKSet,
  createRemoteJWKSet,
  flattenedVerify,
  type FlattenedVerifyGetKey,
  type JSONWebKeySet
} from "jose"
import { jcs } from "../../src/Services/Receipts/Jcs.js"

/**
 * An independent check of a signed record, as a customer would make it: the record without
 * `signature` canonicalised (RFC 8785), the detached JWS checked by jose's `flattenedVerify`
 * with the key its `kid` names in `keys`. Answers the key id that verified, or throws jose's error.
 */
const verifyAgainst = async (keys: FlattenedVerifyGetKey, record: Record<string, unknown>) => {
  const { signature, ...signed } = record as { signature: { jws: string; kid: string } }
  const [protectedHeader, payload, sig] = signature.jws.split(".")
  if (payload !== "") throw new Error("the JWS is not detached")
  const verified = await flattenedVerify(
    { protected: protectedHeader!, signature: sig!, payload: Buffer.from(jcs(signed)).toString("base64url") },
    keys
  )
  return verified.protectedHeader?.kid
}

/** The check against the JWKS the service publishes, fetched over HTTP from `baseUrl`. */
export const verifyWithJose = (baseUrl: string, record: Record<string, unknown>) =>
  verifyAgainst(
    createRemoteJWKSet(new URL("/.well-known/jwks.json", baseUrl), { cacheMaxAge: 0, cooldownDuration: 0 }),
    record
  )

/** The check against a JWKS in hand: the keys `SigningKeys.published` answers, as the route publishes them. */
export const verifyWithKeys = (jwks: JSONWebKeySet, record: Record<string, unknown>) =>
  verifyAgainst(createLocalJWKSet(jwks), record)

/** Every leaf of a JSON value with its path, for tampering one at a time. */
export const leavesOf = (value: unknown, path: ReadonlyArray<string | number> = []): Array<{
  path: ReadonlyArray<string | number>
  value: unknown
}> => {
  if (value !== null && typeof value === "object") {
    const entries = Array.isArray(value) ? value.map((v, i) => [i, v] as const) : Object.entries(value)
    return entries.flatMap(([key, child]) => leavesOf(child, [...path, key]))
  }
  return [{ path, value }]
}

/** A copy of `record` with the leaf at `path` changed to a different value of the same kind. */
export const tampered = <A>(record: A, path: ReadonlyArray<string | number>): A => {
  const copy = structuredClone(record) as any
  let parent = copy
  for (const key of path.slice(0, -1)) parent = parent[key]
  const last = path[path.length - 1]!
  const old = parent[last]
  parent[last] = typeof old === "number" ?
    old + 1
    : typeof old === "boolean" ?
    !old
    : typeof old === "string" ?
    (/^\d+$/.test(old) ? String(BigInt(old) + 1n) : `${old}x`)
    : "x"
  return copy
}
