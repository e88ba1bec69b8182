import type { Schema } from "effect"
import type { Me } from "../../../src/Http/Groups/IdentitySchemas.js"

/** The contract's own types, for props. */
export type MeData = Schema.Schema.Type<typeof Me>
export type OrgOfMe = MeData["orgs"][number]
