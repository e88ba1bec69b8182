import { Model } from "@effect/sql"
import { Schema } from "effect"
import { AgentId, JobId, OrgId, ReceiptId } from "./Ids.js"
import { LaterTimestampColumn, TimestampColumn } from "./Timestamps.js"

/**
 * A purchase job (more than 25 inputs), declared once: `PurchaseJob` decodes its row,
 * `PurchaseJob.insert` is a new one (queued, nobody's lease), and its json fields are the
 * job's own part of the wire's `Job` (Domain/Purchasing.ts), which adds the receipt's tool,
 * totals and items. The org, the agent and the worker's lease stay off the wire.
 */
export class PurchaseJob extends Model.Class<PurchaseJob>("PurchaseJob")({
  id: Model.GeneratedByApp(JobId),
  status: Schema.Literal("queued", "running", "done"),
  receipt_id: ReceiptId,
  org_id: Model.FieldExcept("json", "jsonCreate", "jsonUpdate")(OrgId),
  agent_id: Model.FieldExcept("json", "jsonCreate", "jsonUpdate")(AgentId),
  /** The worker holding the job, and until when. */
  lease_owner: Model.FieldOnly("select")(Schema.NullOr(Schema.String)),
  lease_until: Model.FieldOnly("select")(Schema.NullOr(Schema.DateFromSelf)),
  created_at: TimestampColumn,
  started_at: LaterTimestampColumn,
  completed_at: LaterTimestampColumn,
  /** Items not run by then expire and their holds go back. */
  deadline_at: TimestampColumn
}) {}
