import { Model } from "@effect/sql"
import { Schema } from "effect"

/** An Ed25519 public key as a JWK (RFC 8037). */
export const PublicJwk = Schema.Struct({ kty: Schema.Literal("OKP"), crv: Schema.Literal("Ed25519"), x: Schema.String })

/**
 * A receipt signing key, declared once: `SigningKey` decodes its row, `SigningKey.insert` is a
 * new generation (the public JWK a jsonb column, the private key only sealed). It has no wire
 * record of its own: the JWKS publishes `PublishedKey`, its public JWK with its `kid`.
 */
export class SigningKey extends Model.Class<SigningKey>("SigningKey")({
  kid: Schema.String,
  generation: Schema.Number,
  public_jwk: Model.Field({ select: PublicJwk, insert: Schema.parseJson(PublicJwk) }),
  private_sealed: Model.Field({ select: Schema.String, insert: Schema.String }),
  created_at: Model.Field({ select: Schema.DateFromSelf, insert: Schema.DateFromSelf })
}) {}

/** The algorithm every signing key signs with. */
export const SIGNING_ALG = "EdDSA"

/** A signing key as the JWKS publishes it (RFC 7517): its public JWK, `kid`, `alg` and `use`. */
export const PublishedKey = Schema.Struct({
  ...PublicJwk.fields,
  kid: SigningKey.fields.kid.annotations({ description: "The RFC 7638 thumbprint of the key" }),
  alg: Schema.Literal(SIGNING_ALG),
  use: Schema.Literal("sig")
}).annotations({ identifier: "PublishedKey" })
export type PublishedKey = typeof PublishedKey.Type
