import { Model } from "@effect/sql"
import { Schema } from "effect"
import { DeletionRequestId, OrgId, UserId } from "./Ids.js"
import { LaterTimestampColumn, TimestampColumn } from "./Timestamps.js"

/**
 * An owner's request to delete the org's data, declared once: its row, the row a request
 * writes, and the wire record (who asked is kept by their address; their account id stays
 * off the wire). Carrying it out fills `completed_at` and the `summary` of what went.
 */
export class DeletionRequest extends Model.Class<DeletionRequest>("DeletionRequest")({
  id: Model.GeneratedByApp(DeletionRequestId),
  org_id: OrgId,
  requested_by: Model.FieldExcept("json", "jsonCreate", "jsonUpdate", "update")(UserId),
  status: Schema.Literal("pending", "completed", "cancelled"),
  reason: Schema.NullOr(Schema.String),
  requested_by_email: Schema.String,
  created_at: TimestampColumn,
  completed_at: LaterTimestampColumn,
  summary: Model.Field({
    select: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.Int })),
    json: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.Int })).annotations({
      description: "What carrying the request out removed or anonymised, by kind"
    })
  })
}) {}

/** The wire's deletion request. */
export const DeletionRequestJson = DeletionRequest.json.annotations({ identifier: "DeletionRequest", title: undefined })
