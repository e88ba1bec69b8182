import { Schema } from "effect"
import {
  AgentId,
  ApprovalId,
  BenchmarkRunId,
  DeletionRequestId,
  DisputeId,
  EventId,
  InviteId,
  JobId,
  OAuthConnectionId,
  OpeningRequestId,
  OrgId,
  OrgKeyId,
  PaymentId,
  ReceiptId,
  UserId,
  WebhookEndpointId
} from "../../Domain/Ids.js"

/**
 * Path ids: each is its record's branded UUID, decoded by the endpoint before the handler
 * runs. A value that is not a UUID names no record, so the spec's answer is the unknown id's
 * 404 `not_found`: the schema's message says which record, and `isMissingRecord` tells the
 * error responses that this decoding failure is that answer (not a 400 `invalid_input`).
 */
const missing = {
  org: "No such org",
  agent: "No such agent in this org",
  user: "No such member of this org",
  orgKey: "No such active org key",
  invite: "No such pending invitation",
  approval: "No approval with that id",
  webhook: "No such webhook endpoint",
  job: "No job with that id in this org",
  receipt: "No receipt with that id in this org",
  dispute: "No dispute with that id",
  payment: "No such payment",
  connection: "No such connection",
  /** A webhook replay's `event_id` (in its body): no delivery of an event that cannot exist. */
  replayedEvent: "This endpoint has no delivery of that event"
} as const

const missingMessages: ReadonlySet<string> = new Set(Object.values(missing))

/** The administrators' endpoints name the value they did not find: `No org <id>`. */
const missingNamed = {
  org: "No org",
  deletionRequest: "No deletion request",
  benchmarkRun: "No benchmark run",
  openingRequest: "No opening request"
} as const

const namedPrefixes = Object.values(missingNamed).map((words) => `${words} `)

/** Whether a decoding failure's message is a path id's: the record is simply not there. */
export const isMissingRecord = (message: string): boolean =>
  missingMessages.has(message) || namedPrefixes.some((prefix) => message.startsWith(prefix))

const pathId = <A, I extends string>(id: Schema.Schema<A, I>, message: string) =>
  id.annotations({ message: () => ({ message, override: true }), description: "UUID" })

const namedPathId = <A, I extends string>(id: Schema.Schema<A, I>, words: string) =>
  id.annotations({
    message: (issue) => ({ message: `${words} ${String(issue.actual)}`, override: true }),
    description: "UUID"
  })

export const OrgIdParam = pathId(OrgId, missing.org)
export const AgentIdParam = pathId(AgentId, missing.agent)
export const UserIdParam = pathId(UserId, missing.user)
export const OrgKeyIdParam = pathId(OrgKeyId, missing.orgKey)
export const InviteIdParam = pathId(InviteId, missing.invite)
export const ApprovalIdParam = pathId(ApprovalId, missing.approval)
export const WebhookEndpointIdParam = pathId(WebhookEndpointId, missing.webhook)
export const JobIdParam = pathId(JobId, missing.job)
export const ReceiptIdParam = pathId(ReceiptId, missing.receipt)
export const DisputeIdParam = pathId(DisputeId, missing.dispute)
export const PaymentIdParam = pathId(PaymentId, missing.payment)
export const OAuthConnectionIdParam = pathId(OAuthConnectionId, missing.connection)

/** Administrators' path ids. */
export const AdminOrgIdParam = namedPathId(OrgId, missingNamed.org)
export const DeletionRequestIdParam = namedPathId(DeletionRequestId, missingNamed.deletionRequest)
export const BenchmarkRunIdParam = namedPathId(BenchmarkRunId, missingNamed.benchmarkRun)
export const OpeningRequestIdParam = namedPathId(OpeningRequestId, missingNamed.openingRequest)
export const EventIdInBody = pathId(EventId, missing.replayedEvent)

export const OrgPath = Schema.Struct({ orgId: OrgIdParam })
