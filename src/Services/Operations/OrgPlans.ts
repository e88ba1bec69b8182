import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { OrgId } from "../../Domain/Ids.js"
import type { PlanId } from "../../Domain/Plans.js"
import { NotFound, ReasonRequired } from "../../Errors/ApiErrors.js"
import { OrgsRepo } from "../Orgs/OrgsRepo.js"
import { type AuditActor, AuditLog } from "./AuditLog.js"

/** An administrator moves an org to another plan (no payment involved), with a reason; audited. */
export class OrgPlans extends Effect.Service<OrgPlans>()("Operations/OrgPlans", {
  dependencies: [AuditLog.Default, OrgsRepo.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const orgs = yield* OrgsRepo
    const audit = yield* AuditLog

    const setPlan = (actor: AuditActor, orgId: OrgId, plan: PlanId, reason: string | undefined) =>
      Effect.gen(function*() {
        const why = reason?.trim() ?? ""
        if (why.length === 0) return yield* new ReasonRequired({ message: "Changing a plan needs a written `reason`" })
        return yield* sql.withTransaction(Effect.gen(function*() {
          const found = yield* orgs.lockOrg(orgId)
          if (Option.isNone(found)) return yield* new NotFound({ message: `No org ${orgId}` })
          yield* orgs.setPlan(orgId, plan)
          yield* audit.record(actor, {
            action: "org.set_plan",
            target_type: "org",
            target_id: orgId,
            reason: why,
            before: { plan: found.value.plan },
            after: { plan }
          })
          return { org_id: orgId, plan }
        }))
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    return { setPlan } as const
  })
}) {}
