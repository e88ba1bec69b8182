import { Model } from "@effect/sql"
import { Schema } from "effect"
import { OpeningRequestId, OrgId, UserId } from "./Ids.js"
import { LaterTimestampColumn, TimestampColumn } from "./Timestamps.js"

/**
 * An on-request gateway endpoint opened for one org (its agents may call it), declared once:
 * the row, the row written, and the wire's `{endpoint_id, opened_at}`.
 */
export class EndpointOpening extends Model.Class<EndpointOpening>("EndpointOpening")({
  org_id: Model.FieldExcept("json", "jsonCreate", "jsonUpdate")(OrgId),
  endpoint_id: Schema.String,
  opened_at: TimestampColumn
}) {}

export const OpeningRequestStatus = Schema.Literal("pending", "opened", "declined")

/**
 * An org's request to open an on-request endpoint, declared once: its row, the row an owner's
 * request writes (with who asked, which the wire does not show), and the wire record.
 */
export class OpeningRequest extends Model.Class<OpeningRequest>("OpeningRequest")({
  id: Model.GeneratedByApp(OpeningRequestId),
  org_id: OrgId,
  endpoint_id: Schema.String,
  requested_by: Model.FieldOnly("insert")(UserId),
  note: Schema.NullOr(Schema.String),
  status: OpeningRequestStatus,
  created_at: TimestampColumn,
  decided_at: LaterTimestampColumn
}) {}

/** The wire's opening request. */
export const OpeningRequestJson = OpeningRequest.json.annotations({ identifier: "OpeningRequest", title: undefined })

/** The wire's opening. */
export const EndpointOpeningJson = EndpointOpening.json.annotations({ identifier: "EndpointOpening", title: undefined })
