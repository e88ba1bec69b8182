import { secretPrefixes } from "../../Domain/SecretPrefixes.js"
import { SESSION_COOKIE } from "../Security/Cookies.js"

/**
 * One security scheme per credential, so generated clients know which one to send. The
 * credential middlewares (Security/AuthTags.ts) each declare one scheme name; the ones
 * that take several credentials (`orgCredential`, `session`) are written out here as the
 * alternatives they accept.
 */
const bearer = (format: string, description: string) => ({
  type: "http",
  scheme: "bearer",
  bearerFormat: format,
  description
})

const sessionCookie = {
  type: "apiKey",
  in: "cookie",
  name: SESSION_COOKIE,
  description:
    "The session cookie set by email or identity-provider sign-in (the dashboard's credential). A write (POST, PUT, PATCH, DELETE) with it must come from the service's own pages (Origin, Sec-Fetch-Site or Referer), else 403 forbidden; scripts send the session as a bearer token."
}

export const securitySchemes: Record<string, object> = {
  agentKey: bearer(
    `${secretPrefixes.agentLive}... or ${secretPrefixes.agentTest}...`,
    "An agent key: live keys spend credits, test keys check and price without spending."
  ),
  orgKey: bearer(
    `${secretPrefixes.orgKey}...`,
    "An org key for scripts, valid only under /v1/orgs/{orgId} of its org."
  ),
  sessionBearer: bearer(`${secretPrefixes.session}...`, "A member's session token from POST /auth/email/verify."),
  sessionCookie,
  adminSession: bearer(`${secretPrefixes.adminSession}...`, "An administrator session from POST /admin/sign-in.")
}

/** Declared scheme name -> the documented alternatives (each is enough on its own). */
const alternatives: Record<string, ReadonlyArray<string>> = {
  agentKey: ["agentKey"],
  orgCredential: ["orgKey", "sessionBearer", "sessionCookie"],
  session: ["sessionBearer", "sessionCookie"],
  adminSession: ["adminSession"]
}

export const documentSecurity = (spec: Record<string, any>): Record<string, any> => {
  spec.components = { ...spec.components, securitySchemes }
  for (const path of Object.values<any>(spec.paths ?? {})) {
    for (const operation of Object.values<any>(path)) {
      const declared: Array<Record<string, unknown>> = operation.security ?? []
      operation.security = declared.flatMap((requirement) =>
        Object.keys(requirement).flatMap((name) => {
          const names = alternatives[name]
          if (names === undefined) throw new Error(`Security scheme ${name} has no documented alternatives`)
          return names.map((alternative) => ({ [alternative]: [] }))
        })
      )
    }
  }
  return spec
}
