import { secretPrefixes } from "./SecretPrefixes.js"

/**
 * Secrets are 32 random bytes written in base62 after a prefix that says what they are
 * (SecretPrefixes.ts). Only their SHA-256 hex is stored (`sha256Hex`, service side in
 * Services/SecretBox/Hashes.ts); the prefix shown to people is the first characters. The
 * random bytes come from Web Crypto (`crypto.getRandomValues`, Node's own CSPRNG in Node),
 * so the contract stays free of Node modules.
 */
export { secretPrefixes }

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

export const base62 = (bytes: Uint8Array): string => {
  let value = 0n
  for (const byte of bytes) value = (value << 8n) | BigInt(byte)
  let out = ""
  while (value > 0n) {
    out = BASE62[Number(value % 62n)] + out
    value /= 62n
  }
  // 32 bytes need at most 43 base62 digits; pad so every secret has the same length.
  return out.padStart(43, "0")
}

export const newSecret = (prefix: string): string => `${prefix}${base62(crypto.getRandomValues(new Uint8Array(32)))}`

/** What kind of credential a bearer token claims to be, by its prefix. */
export type CredentialKind = "agent_key" | "org_key" | "session" | "admin_session" | "unknown"

export const credentialKindOf = (token: string): CredentialKind =>
  token.startsWith(secretPrefixes.agentTest) || token.startsWith(secretPrefixes.agentLive)
    ? "agent_key"
    : token.startsWith(secretPrefixes.orgKey)
    ? "org_key"
    : token.startsWith(secretPrefixes.session)
    ? "session"
    : token.startsWith(secretPrefixes.adminSession)
    ? "admin_session"
    : "unknown"
