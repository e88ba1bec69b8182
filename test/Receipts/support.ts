import { createRemoteJWKSet, flattenedVerify } from "jose"
import { jcs } from "../../src/Services/Receipts/Jcs.js"

/**
 * An independent check of a signed record, as a customer would make it: the JWKS fetched over
 * HTTP, the record without `signature` canonicalised (RFC 8785), the detached JWS checked by
 * jose's `flattenedVerify`. Answers the key id that verified, or throws jose's error.
 */
export const verifyWithJose = async (baseUrl: string, record: Record<string, unknown>) => {
  const { signature, ...signed } = record as { signature: { jws: string; kid: string } }
  const [protectedHeader, payload, sig] = signature.jws.split(".")
  if (payload !== "") throw new Error("the JWS is not detached")
  const jwks = createRemoteJWKSet(new URL("/.well-known/jwks.json", baseUrl), { cacheMaxAge: 0, cooldownDuration: 0 })
  const verified = await flattenedVerify(
    { protected: protectedHeader!, signature: sig!, payload: Buffer.from(jcs(signed)).toString("base64url") },
    jwks
  )
  return verified.protectedHeader?.kid
}

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
