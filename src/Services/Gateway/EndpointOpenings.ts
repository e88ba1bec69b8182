import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { randomUUID } from "node:crypto"
import type { OrgActor } from "../../Domain/Current.js"
import { EndpointOpening, OpeningRequest } from "../../Domain/EndpointOpening.js"
import { Conflict, InvalidInput, NotFound, ReasonRequired } from "../../Errors/ApiErrors.js"
import { requireOwner } from "../Auth/Roles.js"
import { CatalogueRepo } from "../Catalogue/CatalogueRepo.js"
import { type AuditActor, AuditLog } from "../Operations/AuditLog.js"

/**
 * Per-org openings of `on request` gateway endpoints. An org's owners ask for one (a request
 * administrators see in a queue); an administrator opens it for that org (its agents may then
 * call it; other orgs still get 409 endpoint_on_request), declines a request with a reason,
 * or closes an opening again. Administrators' actions are audited.
 */
const encodeRequest = Schema.encode(OpeningRequest.json)

export class EndpointOpenings extends Effect.Service<EndpointOpenings>()("Gateway/EndpointOpenings", {
  dependencies: [AuditLog.Default, CatalogueRepo.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog
    const catalogue = yield* CatalogueRepo
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const findOpening = SqlSchema.findOne({
      Request: Schema.Struct({ orgId: Schema.String, endpointId: Schema.String }),
      Result: EndpointOpening,
      execute: ({ endpointId, orgId }) =>
        sql`SELECT org_id, endpoint_id, opened_at FROM endpoint_openings WHERE org_id = ${orgId} AND endpoint_id = ${endpointId}`
    })
    /** Whether the org may call this on-request endpoint. */
    const isOpen = (orgId: string, endpointId: string) =>
      findOpening({ orgId, endpointId }).pipe(Effect.map(Option.isSome), Effect.orDie)

    const findOpenings = SqlSchema.findAll({
      Request: Schema.String,
      Result: EndpointOpening,
      execute: (orgId) =>
        sql`SELECT org_id, endpoint_id, opened_at FROM endpoint_openings WHERE org_id = ${orgId} ORDER BY endpoint_id`
    })
    const findRequests = SqlSchema.findAll({
      Request: Schema.Struct({ orgId: Schema.NullOr(Schema.String), status: Schema.NullOr(Schema.String) }),
      Result: OpeningRequest,
      execute: ({ orgId, status }) =>
        sql`
          SELECT id, org_id, endpoint_id, note, status, created_at, decided_at FROM endpoint_opening_requests
          WHERE ${
          sql.and([
            orgId === null ? sql`true` : sql`org_id = ${orgId}`,
            status === null ? sql`true` : sql`status = ${status}`
          ])
        }
          ORDER BY created_at, id LIMIT 500`
    })
    const findRequest = SqlSchema.findOne({
      Request: Schema.String,
      Result: OpeningRequest,
      execute: (id) =>
        sql`
          SELECT id, org_id, endpoint_id, note, status, created_at, decided_at FROM endpoint_opening_requests
          WHERE id::text = ${id} FOR UPDATE`
    })

    /** The endpoint, which must exist and be opened per customer. */
    const onRequestEndpoint = (endpointId: string) =>
      Effect.gen(function*() {
        const endpoint = yield* catalogue.endpoint(endpointId)
        if (Option.isNone(endpoint)) return yield* new NotFound({ message: `No endpoint ${endpointId}` })
        if (endpoint.value.availability !== "on request") {
          return yield* new InvalidInput({ message: `${endpointId} is live for every org; it needs no opening` })
        }
        return endpoint.value
      })

    const findOrg = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ id: Schema.String }),
      execute: (orgId) => sql`SELECT id FROM orgs WHERE id::text = ${orgId} AND closed_at IS NULL`
    })
    const orgExists = (orgId: string) =>
      Effect.flatMap(
        findOrg(orgId).pipe(Effect.orDie),
        (found) => Option.isNone(found) ? new NotFound({ message: `No org ${orgId}` }) : Effect.void
      )

    /** An owner asks for an endpoint to be opened for the org. */
    const request = (actor: OrgActor, endpointId: string, note: string | null) =>
      Effect.gen(function*() {
        yield* requireOwner(actor)
        yield* onRequestEndpoint(endpointId)
        return yield* sql.withTransaction(Effect.gen(function*() {
          if (yield* isOpen(actor.org_id, endpointId)) {
            return yield* new Conflict({ message: `${endpointId} is already open for this org` })
          }
          const at = yield* now
          yield* sql`
            INSERT INTO endpoint_opening_requests (id, org_id, endpoint_id, requested_by, note, status, created_at)
            VALUES (${randomUUID()}, ${actor.org_id}, ${endpointId}, ${actor.user_id}, ${note}, 'pending', ${at})
            ON CONFLICT (org_id, endpoint_id) WHERE status = 'pending' DO NOTHING`
          const rows = yield* findRequests({ orgId: actor.org_id, status: "pending" })
          return rows.find((row) => row.endpoint_id === endpointId)!
        }))
      }).pipe(Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die }))

    /** The org's openings and its requests. */
    const forOrg = (orgId: string) =>
      Effect.all({
        openings: findOpenings(orgId),
        requests: findRequests({ orgId, status: null })
      }).pipe(Effect.orDie)

    /** Administrators' queue of requests, oldest first. */
    const queue = (status: "pending" | "opened" | "declined" | undefined) =>
      findRequests({ orgId: null, status: status ?? null }).pipe(Effect.orDie)

    const open = (actor: AuditActor, orgId: string, endpointId: string, reason: string | undefined) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* orgExists(orgId)
        yield* onRequestEndpoint(endpointId)
        const at = yield* now
        const already = yield* isOpen(orgId, endpointId)
        yield* sql`
          INSERT INTO endpoint_openings (org_id, endpoint_id, opened_at) VALUES (${orgId}, ${endpointId}, ${at})
          ON CONFLICT DO NOTHING`
        yield* sql`
          UPDATE endpoint_opening_requests SET status = 'opened', decided_at = ${at}
          WHERE org_id = ${orgId} AND endpoint_id = ${endpointId} AND status = 'pending'`
        yield* audit.record(actor, {
          action: "endpoint.open",
          target_type: "org",
          target_id: orgId,
          reason: reason?.trim() || null,
          before: { endpoint_id: endpointId, open: already },
          after: { endpoint_id: endpointId, open: true }
        })
        return { org_id: orgId, endpoint_id: endpointId, open: true }
      })).pipe(Effect.catchTags({ SqlError: Effect.die }))

    const close = (actor: AuditActor, orgId: string, endpointId: string, reason: string | undefined) =>
      Effect.gen(function*() {
        const why = reason?.trim() ?? ""
        if (why.length === 0) {
          return yield* new ReasonRequired({ message: "Closing an opening needs a written `reason`" })
        }
        return yield* sql.withTransaction(Effect.gen(function*() {
          yield* orgExists(orgId)
          const removed = yield* sql`
            DELETE FROM endpoint_openings WHERE org_id = ${orgId} AND endpoint_id = ${endpointId} RETURNING endpoint_id`
          if (removed.length === 0) {
            return yield* new NotFound({ message: `${endpointId} is not open for org ${orgId}` })
          }
          yield* audit.record(actor, {
            action: "endpoint.close",
            target_type: "org",
            target_id: orgId,
            reason: why,
            before: { endpoint_id: endpointId, open: true },
            after: { endpoint_id: endpointId, open: false }
          })
          return { org_id: orgId, endpoint_id: endpointId, open: false }
        }))
      }).pipe(Effect.catchTags({ SqlError: Effect.die }))

    const decline = (actor: AuditActor, requestId: string, reason: string | undefined) =>
      Effect.gen(function*() {
        const why = reason?.trim() ?? ""
        if (why.length === 0) {
          return yield* new ReasonRequired({ message: "Declining a request needs a written `reason`" })
        }
        return yield* sql.withTransaction(Effect.gen(function*() {
          const found = yield* findRequest(requestId)
          if (Option.isNone(found)) return yield* new NotFound({ message: `No opening request ${requestId}` })
          if (found.value.status !== "pending") {
            return yield* new Conflict({ message: `This request was already ${found.value.status}` })
          }
          const at = yield* now
          yield* sql`UPDATE endpoint_opening_requests SET status = 'declined', decided_at = ${at} WHERE id = ${found.value.id}`
          const declined = new OpeningRequest({ ...found.value, status: "declined", decided_at: at })
          yield* audit.record(actor, {
            action: "endpoint.decline_request",
            target_type: "org",
            target_id: found.value.org_id,
            reason: why,
            before: yield* encodeRequest(found.value),
            after: { ...(yield* encodeRequest(found.value)), status: "declined" }
          })
          return declined
        }))
      }).pipe(Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die }))

    return { isOpen, request, forOrg, queue, open, close, decline } as const
  })
}) {}
