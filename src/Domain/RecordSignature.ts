import { Schema } from "effect"

/** The signature a receipt, a gateway call or a dispute carries (Services/Receipts/RecordSigner.ts). */
export const RecordSignature = Schema.Struct({
  alg: Schema.Literal("EdDSA"),
  kid: Schema.String.annotations({ description: "The key's id in /.well-known/jwks.json" }),
  jws: Schema.String.annotations({
    description: "Detached JWS (`<protected>..<signature>`) over the RFC 8785 canonical JSON of the record " +
      "without its `signature` member"
  })
}).annotations({
  identifier: "RecordSignature",
  description: "The service's Ed25519 signature of this record, checkable with its published keys alone"
})
export type RecordSignature = typeof RecordSignature.Type
