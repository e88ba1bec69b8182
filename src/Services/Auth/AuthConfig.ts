import { Config, Effect, Option, Redacted } from "effect"

/**
 * Settings of the sign-in flows:
 * - DASHBOARD_PATH: where a browser lands after signing in (default `/dashboard`), under
 *   the public base address; invitation links point below it too.
 * - IDP_ISSUER, IDP_CLIENT_ID, IDP_CLIENT_SECRET: the OpenID Connect provider; identity-
 *   provider sign-in is off (503 `not_configured`) unless all three are set.
 */
export interface IdpSettings {
  readonly issuer: string
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
}

export class AuthConfig extends Effect.Service<AuthConfig>()("Auth/AuthConfig", {
  effect: Effect.gen(function*() {
    const dashboardPath = yield* Config.string("DASHBOARD_PATH").pipe(
      Config.withDefault("/dashboard"),
      Config.map((path) => (path.startsWith("/") ? path : `/${path}`).replace(/\/+$/, "") || "/")
    )
    const issuer = yield* Config.option(Config.string("IDP_ISSUER"))
    const clientId = yield* Config.option(Config.string("IDP_CLIENT_ID"))
    const clientSecret = yield* Config.option(Config.redacted("IDP_CLIENT_SECRET"))
    const environment = yield* Config.string("SERVICE_ENV").pipe(Config.withDefault("development"))
    const idp: Option.Option<IdpSettings> =
      Option.isSome(issuer) && Option.isSome(clientId) && Option.isSome(clientSecret)
        ? Option.some({ issuer: issuer.value, clientId: clientId.value, clientSecret: clientSecret.value })
        : Option.none()
    return { dashboardPath, idp, secureCookies: environment === "production" } as const
  })
}) {}
