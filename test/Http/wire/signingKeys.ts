import { calculateJwkThumbprint } from "jose"
import { describe, expect, it } from "vitest"
import { request } from "../../support/server.js"
import { world } from "./world.js"

/**
 * The route a customer fetches the keys from to check a signed record. What the keys sign,
 * how they rotate and that older ones stay published are `Receipts/signedRecords.test.ts`'s.
 */
export const signingKeysCases = () => {
  describe("GET /.well-known/jwks.json", () => {
    it("publishes the signing keys to anyone: Ed25519 public keys named by their thumbprint, with no private part", async () => {
      const answer = await request(`${world.server.url}/.well-known/jwks.json`)
      expect(answer.status).toBe(200)
      expect(answer.headers.get("content-type")).toContain("application/json")
      expect(Object.keys(answer.json)).toEqual(["keys"])
      expect(answer.json.keys.length).toBeGreaterThanOrEqual(1)
      for (const key of answer.json.keys) {
        expect(Object.keys(key).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x"])
        expect(key).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig" })
        expect(key.x).toMatch(/^[\w-]{43}$/)
        expect(key.kid).toBe(await calculateJwkThumbprint({ kty: key.kty, crv: key.crv, x: key.x }, "sha256"))
      }
    })
  })
}
