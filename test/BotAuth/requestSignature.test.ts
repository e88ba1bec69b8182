import { component, createSignatureSync } from "http-message-sig"
import { createPrivateKey } from "node:crypto"
import { describe, expect, it } from "vitest"
import {
  ed25519Signer,
  freshNonce,
  NONCE_BYTES,
  signatureAgentField,
  signRequest
} from "../../src/Services/BotAuth/RequestSignature.js"

/**
 * The request signature is written without the general RFC 9421 library on the hot path;
 * these prove it is byte for byte what `http-message-sig` makes from the same inputs, in the
 * shape of the draft's minimal request signature (its test vectors' key).
 */

// RFC 9421 Appendix B.1.4, the key of the draft's test vectors (a test key: never in production).
const TEST_KEY = createPrivateKey({
  key: {
    kty: "OKP",
    crv: "Ed25519",
    d: "n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU",
    x: "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"
  },
  format: "jwk"
})
const key = { kid: "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U", privateKey: TEST_KEY }

const withLibrary = (url: string, agentOrigin: string, created: number, nonce: string) =>
  createSignatureSync(
    {
      kind: "request",
      method: "GET",
      targetUri: url,
      fields: [{ name: "signature-agent", value: signatureAgentField(agentOrigin) }]
    },
    {
      label: "sig1",
      components: ["@authority", component("signature-agent", { key: "sig1" })],
      parameters: { created, expires: created + 300, keyid: key.kid, alg: "ed25519", nonce, tag: "web-bot-auth" },
      signer: ed25519Signer(TEST_KEY)
    }
  )

describe("the request signature", () => {
  it("is what http-message-sig makes from the same request, key, time and nonce", () => {
    for (
      const url of [
        "https://api.example.com/v1/people?email=a%40b.test&api_key=secret",
        "http://127.0.0.1:4567/fakeprov/v1/ok",
        "https://API.Example.com:443/x",
        "https://api.example.com:8443/"
      ]
    ) {
      const nowMs = 1_735_689_600_123
      const nonce = freshNonce()
      const mine = signRequest(key, { url, agentOrigin: "https://gateway.example.test", nowMs, nonce })
      const library = withLibrary(url, "https://gateway.example.test", 1_735_689_600, nonce)
      expect(mine.signature).toBe(library.signature)
      expect(mine["signature-input"]).toBe(library.signatureInput)
      expect(mine["signature-agent"]).toBe("sig1=\"https://gateway.example.test\"")
    }
  })

  it("covers what the draft's minimal signature covers, with the dictionary Signature-Agent", () => {
    const nonce = "n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA=="
    const mine = signRequest(key, {
      url: "https://example.com/",
      agentOrigin: "https://signature-agent.test",
      nowMs: 1_735_689_600_000,
      nonce
    })
    expect(mine["signature-input"]).toBe(
      `sig1=("@authority" "signature-agent";key="sig1");created=1735689600;expires=1735689900;keyid="${key.kid}";alg="ed25519";nonce="${nonce}";tag="web-bot-auth"`
    )
    expect(mine["signature-agent"]).toBe("sig1=\"https://signature-agent.test\"")
    expect(mine.signature).toBe(
      withLibrary("https://example.com/", "https://signature-agent.test", 1_735_689_600, nonce).signature
    )
  })

  it("takes a fresh 64-byte nonce for every request", () => {
    const nonces = Array.from({ length: 2500 }, freshNonce)
    expect(new Set(nonces).size).toBe(nonces.length)
    for (const nonce of nonces.slice(0, 3)) expect(Buffer.from(nonce, "base64")).toHaveLength(NONCE_BYTES)
  })
})
