import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { PublishedKey } from "../../Domain/SigningKey.js"
import { PublicRateLimit } from "../Security/RateLimitTags.js"

/** The public keys that check signed receipts, calls and disputes (RFC 7517 JWK Set). */
export const Jwks = Schema.Struct({
  keys: Schema.Array(PublishedKey).annotations({
    description: "Newest first; the first signs now, older ones stay so signatures they made still verify"
  })
}).annotations({ identifier: "Jwks" })

export class SigningKeysGroup extends HttpApiGroup.make("signingKeys")
  .add(
    HttpApiEndpoint.get("jwks", "/.well-known/jwks.json")
      .annotateContext(
        OpenApi.annotations({
          summary: "Receipt signing keys",
          description:
            "The Ed25519 public keys (JWK Set) that check the `signature` of receipts, gateway calls and disputes. Keys rotate; an older key stays listed so what it signed can still be checked."
        })
      ).addSuccess(Jwks)
  )
  .middleware(PublicRateLimit)
  .annotateContext(OpenApi.annotations({
    title: "Signing keys",
    description: "No credential needed. The keys that check the signatures of receipts, gateway calls and disputes."
  }))
{}
