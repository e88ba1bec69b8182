import { Schema } from "effect"
import { OrgId } from "../../Domain/Ids.js"
import { Role } from "../../Domain/Org.js"
import { UserJson } from "../../Domain/User.js"

/** Records and inputs shared by the identity groups (sign-in, account, orgs, agents, keys). */

export const Timestamp = Schema.String.annotations({ description: "ISO 8601 UTC with milliseconds" })

export { Role }

/** A path identifier not yet decoded as its record's id (`PathIds.ts` has those). */
export const PathId = Schema.String

export { OrgPath } from "./PathIds.js"

/** Whole credits as input: a non-negative integer, or a string of digits. */
export const WholeCreditsInput = Schema.transform(
  Schema.Union(
    Schema.Int.pipe(Schema.between(0, Number.MAX_SAFE_INTEGER)),
    Schema.String.pipe(Schema.pattern(/^\d{1,18}$/))
  ).annotations({ message: () => "Expected whole credits: a non-negative integer or a string of digits" }),
  Schema.BigIntFromSelf,
  { strict: true, decode: (value) => BigInt(value), encode: (value) => value.toString() }
).annotations({ description: "Whole credits (1 credit = $0.001)" })

/** The wire's user: the `User` model's json variant (Domain/User.ts). */
export { UserJson as User } from "../../Domain/User.js"

export const Me = Schema.Struct({
  user: UserJson,
  orgs: Schema.Array(Schema.Struct({ id: OrgId, name: Schema.String, role: Role }))
}).annotations({ identifier: "Me" })

/** The wire's org, member and invitation: the `Org`, `Member` and `Invite` models' (Domain/Org.ts). */
export { InviteJson as Invite, MemberJson as Member, OrgJson as Org } from "../../Domain/Org.js"

/** The wire's data-deletion request: the `DeletionRequest` model's (Domain/DeletionRequest.ts). */
export { DeletionRequestJson as DeletionRequest } from "../../Domain/DeletionRequest.js"

/** The wire's agent: the `Agent` model's json variant (Domain/Agent.ts). */
export { AgentJson as Agent } from "../../Domain/Agent.js"

/** The wire's org key: the `OrgKey` model's json variant (Domain/OrgKey.ts). */
export { OrgKeyJson as OrgKey } from "../../Domain/OrgKey.js"

export const Revoked = Schema.Struct({ status: Schema.Literal("revoked") })
