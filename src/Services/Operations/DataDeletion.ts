import { SqlClient, SqlSchema, type Statement } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { DeletionRequest } from "../../Domain/DeletionRequest.js"
import { Conflict, NotFound } from "../../Errors/ApiErrors.js"
import { MailOutbox } from "../Mailer/MailOutbox.js"
import { statementRows } from "../StatementRows.js"
import { type AuditActor, AuditLog } from "./AuditLog.js"

/**
 * Carrying out an org's data-deletion request, in one transaction:
 *
 * - erased: the people who belong to no other org (email, name and phone anonymised; their
 *   sessions, sign-in links, phone codes and waitlist entries deleted), the org's
 *   memberships and invitations, org keys, agents' keys, names, IP allowlists and the
 *   addresses they were seen from, webhook endpoints with their secrets and deliveries,
 *   the event log, queued mail to the org's people (sent mail forgets their address),
 *   idempotency keys (they keep answers), the saved card and payment customer;
 * - kept, with personal fields replaced: ledger entries, receipts (each item's input and
 *   result cleared, its result hash, cost and outcome kept), approvals (no decider email or
 *   note), disputes (no reason or note), payments (no card, receipt link or failure text);
 * - then the org is closed (renamed, credits frozen). The request becomes `completed` with
 *   a summary of what was removed, readable by its asker at GET /v1/me/deletion-requests,
 *   and the asker is mailed the summary (the outbox forgets the address once it is sent).
 *
 * People who also belong to another org keep their account; only this org's ties go. Those
 * who are erased leave no copy of their address behind in other orgs either: their earlier
 * deletion requests, the org keys and invitations they made and the approvals they decided
 * there name their anonymised address, and invitations addressed to them are withdrawn.
 */
const ERASED_ORG_NAME = "Erased org"
/** Where an erased person's address points. */
const ERASED_DOMAIN = "@erased.invalid"
/** An address erased earlier (`erased` is what rows carried before the anonymised address). */
const isErasedAddress = (address: string) => address === "erased" || address.endsWith(ERASED_DOMAIN)

/** A request in administrators' queue: the request with its org's name. */
export const DeletionQueueRow = Schema.Struct({
  ...DeletionRequest.fields,
  org_name: Schema.String
})

export class DataDeletion extends Effect.Service<DataDeletion>()("Operations/DataDeletion", {
  dependencies: [AuditLog.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog
    const outbox = yield* MailOutbox

    const findQueue = SqlSchema.findAll({
      Request: Schema.NullOr(Schema.String),
      Result: DeletionQueueRow,
      execute: (status) =>
        sql`
          SELECT d.id, d.org_id, d.requested_by, d.status, d.reason, d.requested_by_email, d.created_at,
                 d.completed_at, d.summary, o.name AS org_name
          FROM deletion_requests d JOIN orgs o ON o.id = d.org_id
          WHERE ${status === null ? sql`true` : sql`d.status = ${status}`}
          ORDER BY d.created_at, d.id LIMIT 500`
    })
    /** Administrators' queue, oldest first. */
    const queue = (status: "pending" | "completed" | "cancelled" | undefined) =>
      findQueue(status ?? null).pipe(Effect.orDie)

    const findRequest = SqlSchema.findOne({
      Request: Schema.String,
      Result: DeletionRequest,
      execute: (id) =>
        sql`
          SELECT id, org_id, status, reason, requested_by, requested_by_email, created_at, completed_at, summary
          FROM deletion_requests WHERE id::text = ${id} FOR UPDATE`
    })

    /** The org's invitees, with the account that has the address if there is one. */
    const invitedAddresses = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ email: Schema.String, user_id: Schema.NullOr(Schema.String) }),
      execute: (orgId) =>
        sql`
          SELECT lower(i.email) AS email, u.id AS user_id
          FROM org_invites i LEFT JOIN users u ON lower(u.email) = lower(i.email)
          WHERE i.org_id = ${orgId}`
    })

    const Person = Schema.Struct({ id: Schema.String, email: Schema.String, phone: Schema.NullOr(Schema.String) })
    const findPeople = SqlSchema.findAll({
      Request: Schema.String,
      Result: Person,
      execute: (orgId) =>
        sql`
          SELECT u.id, u.email, u.phone FROM users u
          WHERE u.id IN (SELECT user_id FROM org_members WHERE org_id = ${orgId})
            AND NOT EXISTS (
              SELECT 1 FROM org_members m JOIN orgs o ON o.id = m.org_id
              WHERE m.user_id = u.id AND m.org_id <> ${orgId} AND o.closed_at IS NULL
            )
          FOR UPDATE OF u`
    })

    /** `IN (...)` over a list that may be empty (then it matches nothing). */
    const inList = (values: ReadonlyArray<string>) => sql.in(values.length > 0 ? values : [null])

    /** Runs a data-modifying statement and answers how many rows it touched. */
    const counted = statementRows(Schema.Struct({ n: Schema.Number }))
    const touched = (statement: Statement.Statement<unknown>) =>
      Effect.map(
        counted.single(sql`WITH touched AS (${statement} RETURNING 1) SELECT count(*)::int AS n FROM touched`),
        (row) => row.n
      ).pipe(Effect.orDie)

    const carryOut = (actor: AuditActor, requestId: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const found = yield* findRequest(requestId)
        if (Option.isNone(found)) return yield* new NotFound({ message: `No deletion request ${requestId}` })
        const request = found.value
        if (request.status !== "pending") {
          return yield* new Conflict({ message: `This request was already ${request.status}` })
        }
        const orgId = request.org_id
        const at = new Date(yield* Clock.currentTimeMillis)
        const people = yield* findPeople(orgId)
        const ids = people.map((p) => p.id)
        const emails = people.map((p) => p.email.toLowerCase())
        // An invitee who has an account kept elsewhere keeps their sign-in links, mail and waitlist entry.
        const inviteEmails = (yield* invitedAddresses(orgId))
          .filter((row) => row.user_id === null || ids.includes(row.user_id))
          .map((row) => row.email)
        const addresses = [...new Set([...emails, ...inviteEmails])]
        const askerErased = ids.includes(request.requested_by)
        const agents = sql`SELECT id FROM agents WHERE org_id = ${orgId}`

        const summary: Record<string, number> = {}
        const count = (kind: string, statement: Statement.Statement<unknown>) =>
          Effect.map(touched(statement), (n) => {
            summary[kind] = (summary[kind] ?? 0) + n
          })

        // People and their ways in.
        yield* count("sessions", sql`DELETE FROM sessions WHERE user_id IN ${inList(ids)}`)
        yield* count(
          "sign_in_links",
          sql`DELETE FROM sign_in_tokens WHERE lower(email) IN ${inList(addresses)}`
        )
        yield* count("phone_codes", sql`DELETE FROM phone_codes WHERE user_id IN ${inList(ids)}`)
        yield* count(
          "waitlist_entries",
          sql`DELETE FROM waitlist WHERE lower(email) IN ${inList(addresses)}`
        )
        yield* count(
          "queued_mail",
          sql`DELETE FROM mail_outbox WHERE status = 'pending' AND lower(to_address) IN ${inList(addresses)}`
        )
        yield* sql`
          UPDATE mail_outbox SET to_address = 'erased', message_enc = NULL, last_error = NULL
          WHERE lower(to_address) IN ${inList(addresses)}`
        yield* count(
          "people",
          sql`
            UPDATE users SET email = 'erased-' || id || ${ERASED_DOMAIN}, name = NULL, phone = NULL,
              phone_verified = false, email_verified = false
            WHERE id IN ${inList(ids)}`
        )
        // Their address copied into other orgs' records: the anonymised one instead, wherever it was.
        const erasedPerson = sql`SELECT id, email FROM users WHERE id IN ${inList(ids)}`
        yield* sql`
          UPDATE deletion_requests d SET requested_by_email = u.email, reason = NULL
          FROM (${erasedPerson}) u WHERE d.requested_by = u.id`
        yield* sql`
          UPDATE org_keys k SET created_by_email = u.email FROM (${erasedPerson}) u WHERE k.created_by = u.id`
        yield* sql`
          UPDATE org_invites i SET invited_by_email = u.email FROM (${erasedPerson}) u WHERE i.invited_by = u.id`
        yield* sql`
          UPDATE purchase_approvals a SET decided_by_email = u.email FROM (${erasedPerson}) u
          WHERE a.decided_by = u.id AND a.decided_by_email IS NOT NULL`
        yield* count(
          "invitations_elsewhere",
          sql`DELETE FROM org_invites WHERE org_id <> ${orgId} AND lower(email) IN ${inList(emails)}`
        )
        yield* count("memberships", sql`DELETE FROM org_members WHERE org_id = ${orgId}`)
        yield* count("invitations", sql`DELETE FROM org_invites WHERE org_id = ${orgId}`)
        yield* count("org_keys", sql`DELETE FROM org_keys WHERE org_id = ${orgId}`)

        // Agents keep their ids (receipts and ledger entries name them), nothing else.
        yield* count("agent_addresses", sql`DELETE FROM agent_key_addresses WHERE agent_id IN (${agents})`)
        yield* count("agent_retired_keys", sql`DELETE FROM agent_retired_keys WHERE org_id = ${orgId}`)
        yield* count(
          "agents",
          sql`
            UPDATE agents SET name = 'Erased agent', status = 'disabled', ip_allowlist = '[]', key_hash = NULL,
              key_prefix = NULL
            WHERE org_id = ${orgId}`
        )
        yield* count("idempotency_keys", sql`DELETE FROM idempotency_keys WHERE agent_id IN (${agents})`)

        // Webhooks and events.
        yield* count("webhook_deliveries", sql`DELETE FROM webhook_deliveries WHERE org_id = ${orgId}`)
        yield* count("webhook_endpoints", sql`DELETE FROM webhook_endpoints WHERE org_id = ${orgId}`)
        yield* count("events", sql`DELETE FROM events WHERE org_id = ${orgId}`)

        // Kept for the ledger and the law, personal fields replaced.
        yield* count(
          "receipt_items_cleared",
          sql`
            UPDATE receipt_items SET input = '{}'::jsonb, result = NULL, reason = NULL
            WHERE receipt_id IN (SELECT id FROM receipts WHERE org_id = ${orgId})`
        )
        yield* count(
          "approvals_cleared",
          sql`UPDATE purchase_approvals SET decided_by_email = NULL, note = NULL WHERE org_id = ${orgId}`
        )
        yield* sql`DELETE FROM approval_links WHERE approval_id IN (SELECT id FROM purchase_approvals WHERE org_id = ${orgId})`
        yield* count("disputes_cleared", sql`UPDATE disputes SET reason = NULL, note = NULL WHERE org_id = ${orgId}`)
        yield* count(
          "payments_cleared",
          sql`
            UPDATE payments SET card_brand = NULL, card_last4 = NULL, receipt_url = NULL, failure_message = NULL
            WHERE org_id = ${orgId}`
        )
        yield* count(
          "saved_cards",
          sql`
            UPDATE billing_profiles SET customer_id = NULL, card_payment_method_id = NULL, card_brand = NULL,
              card_last4 = NULL, card_exp_month = NULL, card_exp_year = NULL, auto_reload_enabled = false
            WHERE org_id = ${orgId} AND (customer_id IS NOT NULL OR card_payment_method_id IS NOT NULL)`
        )
        yield* sql`UPDATE endpoint_opening_requests SET note = NULL WHERE org_id = ${orgId}`

        // The org closes: no member, no key, credits frozen.
        yield* sql`UPDATE orgs SET name = ${ERASED_ORG_NAME}, closed_at = ${at} WHERE id = ${orgId}`
        yield* sql`
          INSERT INTO org_balances (org_id, balance, frozen, updated_at) VALUES (${orgId}, 0, true, ${at})
          ON CONFLICT (org_id) DO UPDATE SET frozen = true, updated_at = excluded.updated_at`
        yield* sql`
          UPDATE deletion_requests SET status = 'completed', completed_at = ${at}, summary = ${
          JSON.stringify(summary)
        }::jsonb,
            reason = NULL
          WHERE id = ${request.id}`
        yield* audit.record(actor, {
          action: "org.erase",
          target_type: "org",
          target_id: orgId,
          reason: `Data-deletion request ${request.id}`,
          after: summary
        })
        // An asker erased by an earlier request has no address left to mail.
        if (!isErasedAddress(request.requested_by_email)) {
          yield* outbox.enqueue({
            to: request.requested_by_email,
            subject: "Your org's data was deleted",
            text: [
              `Your data-deletion request ${request.id} was carried out on ${at.toISOString()}.`,
              "Removed or anonymised:",
              ...Object.entries(summary).map(([kind, n]) => `  ${kind.replaceAll("_", " ")}: ${n}`),
              "Ledger entries, receipts and payments are kept as the law requires, without personal details.",
              askerErased ? "Your account was erased with the org; this is the last message we send you." : ""
            ].join("\n"),
            dedupeKey: `deletion:${request.id}`,
            forgetRecipient: true
          })
        }
        const done = Option.getOrThrow(yield* findRequest(request.id))
        return done
      })).pipe(Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die }))

    return { queue, carryOut } as const
  })
}) {}
