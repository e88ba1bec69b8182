import { Model } from "@effect/sql"
import { Schema } from "effect"

/** A record of the authorization server's library, as it hands it over: a JSON object. */
export const OAuthPayload = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/**
 * One record of the authorization server's library (`AccessToken`, `AuthorizationCode`,
 * `Grant`, `Client`, ...) as stored, declared once: `OAuthRecord.insert` writes it (the
 * payload a jsonb column, with the columns it is found by and its expiry), and a read answers
 * only its payload. It has no wire record: the library alone reads it.
 */
export class OAuthRecord extends Model.Class<OAuthRecord>("OAuthRecord")({
  model: Schema.String,
  id: Schema.String,
  payload: Model.Field({ select: OAuthPayload, insert: Schema.parseJson(OAuthPayload) }),
  grant_id: Model.FieldOnly("insert")(Schema.NullOr(Schema.String)),
  uid: Model.FieldOnly("insert")(Schema.NullOr(Schema.String)),
  user_code: Model.FieldOnly("insert")(Schema.NullOr(Schema.String)),
  expires_at: Model.FieldOnly("insert")(Schema.NullOr(Schema.DateFromSelf))
}) {}
