import type { Me } from "@agent-gateway/contract/Http/Groups/IdentitySchemas.js"
import type { Schema } from "effect"

/** The contract's own types, for props. */
export type MeData = Schema.Schema.Type<typeof Me>
export type OrgOfMe = MeData["orgs"][number]
