import { createHash } from "node:crypto"

/**
 * The SHA-256 hex of a secret (`newSecret` in Domain/Secrets.ts): what is stored and looked
 * up in place of the secret. Service side because it needs Node's crypto synchronously,
 * which the contract (Node-free) may not import.
 */
export const sha256Hex = (value: string): string => createHash("sha256").update(value).digest("hex")
