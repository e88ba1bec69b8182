import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"

/**
 * Who receives an org's owner mails (events, approvals, billing): its owners now, with the
 * org's name for the greeting. One read for every mail that goes to owners.
 */
export const OrgOwner = Schema.Struct({ user_id: Schema.String, email: Schema.String, org_name: Schema.String })
export type OrgOwner = typeof OrgOwner.Type

export class OrgOwners extends Effect.Service<OrgOwners>()("Mailer/OrgOwners", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const findOwners = SqlSchema.findAll({
      Request: Schema.String,
      Result: OrgOwner,
      execute: (orgId) =>
        sql`
          SELECT u.id AS user_id, u.email, o.name AS org_name
          FROM org_members m JOIN users u ON u.id = m.user_id JOIN orgs o ON o.id = m.org_id
          WHERE m.org_id = ${orgId} AND m.role = 'owner'
          ORDER BY u.email`
    })
    const of = (orgId: string) => findOwners(orgId).pipe(Effect.orDie)
    return { of } as const
  })
}) {}
