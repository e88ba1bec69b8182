import { Model } from "@effect/sql"
import { Schema } from "effect"
import { PublicJwk } from "./SigningKey.js"

/**
 * A key that signs the service's requests to providers (Web Bot Auth), declared once:
 * `BotSigningKey` decodes its row, `BotSigningKey.insert` is a new generation (the public
 * JWK a jsonb column, the private key only sealed). It signs from `signs_from` until
 * `signs_until` and is published until `expires_at`.
 */
export class BotSigningKey extends Model.Class<BotSigningKey>("BotSigningKey")({
  kid: Schema.String,
  generation: Schema.Number,
  public_jwk: Model.Field({ select: PublicJwk, insert: Schema.parseJson(PublicJwk) }),
  private_sealed: Model.Field({ select: Schema.String, insert: Schema.String }),
  created_at: Model.Field({ select: Schema.DateFromSelf, insert: Schema.DateFromSelf }),
  signs_from: Model.Field({ select: Schema.DateFromSelf, insert: Schema.DateFromSelf }),
  signs_until: Model.Field({ select: Schema.DateFromSelf, insert: Schema.DateFromSelf }),
  expires_at: Model.Field({ select: Schema.DateFromSelf, insert: Schema.DateFromSelf })
}) {}

/**
 * A key as the HTTP Message Signatures directory publishes it: its public JWK, `kid` (the
 * RFC 7638 thumbprint, the `keyid` of its signatures), `use`, and the seconds between which
 * it is valid (`nbf`: when it starts signing, `exp`: when its last signature has expired).
 */
export const DirectoryKey = Schema.Struct({
  ...PublicJwk.fields,
  kid: Schema.String,
  use: Schema.Literal("sig"),
  nbf: Schema.Int,
  exp: Schema.Int
}).annotations({ identifier: "DirectoryKey" })
export type DirectoryKey = typeof DirectoryKey.Type
