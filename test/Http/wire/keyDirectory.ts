import { expect, it } from "vitest"
import { fetchDirectory } from "../../BotAuth/support.js"
import { world } from "./world.js"

/**
 * `GET /.well-known/http-message-signatures-directory` (Web Bot Auth): the keys that sign the
 * service's requests to providers, answered as the draft asks (its media type, a digest of
 * the body, one signature per key over the authority asked), for verifiers to keep an hour.
 * What the keys sign and how they rotate is `test/BotAuth/requestSigning.test.ts`'s.
 */
export const keyDirectoryCases = () => {
  it("publishes the request signing key, signed for the authority asked, cacheable for an hour", async () => {
    const { cacheControl, keys } = await fetchDirectory(world.server.url, Math.floor(Date.now() / 1000))
    expect(keys).toHaveLength(1)
    expect(keys[0]).toMatchObject({ kty: "OKP", crv: "Ed25519", use: "sig" })
    expect(cacheControl).toBe("max-age=3600")
  })
}
