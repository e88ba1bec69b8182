import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option, Redacted, SynchronizedRef } from "effect"
import { Schema } from "effect"
import { createHash, randomBytes, randomUUID } from "node:crypto"
import * as oidc from "openid-client"
import { EmailAddress } from "../../Domain/Email.js"
import { newSecret, secretPrefixes } from "../../Domain/Secrets.js"
import { IdpFailed, InvalidState, NotConfigured, UnverifiedEmail } from "../../Errors/ApiErrors.js"
import { ExternalFailure } from "../../Errors/ExternalFailure.js"
import { sha256Hex } from "../SecretBox/Hashes.js"
import { statementRows } from "../StatementRows.js"
import { AuthConfig, type IdpSettings } from "./AuthConfig.js"
import { MINUTE_MS } from "./Records.js"
import { type Origin, Sessions } from "./Sessions.js"
import { Users } from "./Users.js"

/** An identity-provider sign-in must come back within 10 minutes, to the same browser. */
export const IDP_FLOW_LIFETIME_MS = 10 * MINUTE_MS

/** The cookie that ties the callback to the browser that started the sign-in. */
export const IDP_COOKIE = "service_idp"

const base64url = (bytes: Buffer) => bytes.toString("base64url")

/**
 * The PKCE verifier and the nonce are derived from the browser's handle (held only in its
 * cookie), so the database keeps nothing that could finish a sign-in by itself.
 */
const derived = (handle: string, purpose: "pkce" | "nonce") =>
  base64url(createHash("sha256").update(`${purpose}:${handle}`).digest())

const isLoopback = (url: URL) =>
  url.hostname === "localhost" || url.hostname === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(url.hostname)

const invalidState = new InvalidState({
  message: "This sign-in took longer than 10 minutes or came back to another browser; start again"
})

const isEmail = Schema.is(EmailAddress)

/**
 * Sign-in with an OpenID Connect provider: authorization code with PKCE (S256), a state
 * bound to a short-lived cookie, a nonce checked in the ID token. Accounts are matched
 * by the provider's verified email.
 */
export class IdentityProvider extends Effect.Service<IdentityProvider>()("Auth/IdentityProvider", {
  dependencies: [AuthConfig.Default, Sessions.Default, Users.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const spentFlowRows = statementRows(Schema.Struct({ state: Schema.String }))
    const config = yield* AuthConfig
    const sessions = yield* Sessions
    const users = yield* Users
    // The provider's metadata, fetched on first use and kept once it worked.
    const discovered = yield* SynchronizedRef.make(Option.none<oidc.Configuration>())

    const settings = Effect.suspend(() =>
      Option.match(config.idp, {
        onNone: () =>
          Effect.fail(
            new NotConfigured({
              message: "Identity-provider sign-in is not switched on (IDP_ISSUER, IDP_CLIENT_ID, IDP_CLIENT_SECRET)"
            })
          ),
        onSome: (idp) => Effect.succeed(idp)
      })
    )

    const discover = (idp: IdpSettings) =>
      SynchronizedRef.modifyEffect(discovered, (current) =>
        Option.match(current, {
          onSome: (configuration) => Effect.succeed([configuration, current] as const),
          onNone: () =>
            Effect.tryPromise({
              try: () => {
                const issuer = new URL(idp.issuer)
                const insecure = issuer.protocol === "http:" && isLoopback(issuer)
                return oidc.discovery(
                  issuer,
                  idp.clientId,
                  Redacted.value(idp.clientSecret),
                  undefined,
                  insecure ? { execute: [oidc.allowInsecureRequests], timeout: 10 } : { timeout: 10 }
                )
              },
              catch: (cause) => new ExternalFailure({ what: "discovery", cause })
            }).pipe(
              Effect.tapError((failure) => Effect.logWarning("Identity provider discovery failed", failure.detail)),
              Effect.mapError(() =>
                new IdpFailed({ message: "The identity provider could not be reached; try again" })
              ),
              Effect.map((configuration) => [configuration, Option.some(configuration)] as const)
            )
        }))

    /** Starts a sign-in: the provider's authorization URL and the handle for the cookie. */
    const start = (baseUrl: string) =>
      Effect.gen(function*() {
        const idp = yield* settings
        const configuration = yield* discover(idp)
        const now = yield* Clock.currentTimeMillis
        const handle = newSecret(secretPrefixes.idpHandle)
        const state = base64url(randomBytes(32))
        yield* sql`
          INSERT INTO idp_sign_ins (id, handle_hash, state, created_at, expires_at)
          VALUES (${randomUUID()}, ${sha256Hex(handle)}, ${state}, ${new Date(now)}, ${new Date(
          now + IDP_FLOW_LIFETIME_MS
        )})`
          .pipe(Effect.orDie)
        const codeChallenge = yield* Effect.promise(() => oidc.calculatePKCECodeChallenge(derived(handle, "pkce")))
        const url = oidc.buildAuthorizationUrl(configuration, {
          redirect_uri: `${baseUrl}/auth/idp/callback`,
          scope: "openid email profile",
          response_type: "code",
          code_challenge: codeChallenge,
          code_challenge_method: "S256",
          state,
          nonce: derived(handle, "nonce")
        })
        return { url: url.href, handle }
      })

    /**
     * Finishes a sign-in: the cookie's handle must match an unexpired, unused start whose
     * state the provider sent back; then the code is exchanged and the email checked.
     */
    const callback = (handle: string | undefined, search: string, baseUrl: string, origin: Origin) =>
      Effect.gen(function*() {
        const idp = yield* settings
        if (handle === undefined || handle.length === 0) return yield* invalidState
        const params = new URLSearchParams(search)
        const now = new Date(yield* Clock.currentTimeMillis)
        const spent = yield* spentFlowRows.one(sql`
              UPDATE idp_sign_ins SET used_at = ${now}
              WHERE handle_hash = ${sha256Hex(handle)} AND used_at IS NULL AND expires_at > ${now}
              RETURNING state`).pipe(Effect.orDie)
        const flow = Option.getOrUndefined(spent)
        if (flow === undefined || params.get("state") !== flow.state) return yield* invalidState
        if (params.has("error")) {
          return yield* new IdpFailed({
            message: `The identity provider did not complete the sign-in (${params.get("error")!.slice(0, 64)})`
          })
        }
        const configuration = yield* discover(idp)
        const incomplete = (what: string) => (cause: unknown) =>
          Effect.zipRight(
            Effect.logWarning(`Identity provider sign-in failed at ${what}`, String(cause)),
            Effect.fail(new IdpFailed({ message: "The identity provider did not complete the sign-in; try again" }))
          )
        const tokens = yield* Effect.tryPromise({
          try: () =>
            oidc.authorizationCodeGrant(configuration, new URL(`${baseUrl}/auth/idp/callback${search}`), {
              pkceCodeVerifier: derived(handle, "pkce"),
              expectedState: flow.state,
              expectedNonce: derived(handle, "nonce"),
              idTokenExpected: true
            }),
          catch: (cause) => new ExternalFailure({ what: "the code exchange", cause })
        }).pipe(Effect.catchAll((failure) => incomplete(failure.what)(failure.detail)))
        const claims = tokens.claims()
        if (claims === undefined) return yield* incomplete("the ID token")("no claims")
        let email = claims["email"]
        let emailVerified = claims["email_verified"]
        let name = claims["name"]
        if (typeof email !== "string") {
          // Some providers put the email only in the userinfo answer.
          const info = yield* Effect.tryPromise({
            try: () => oidc.fetchUserInfo(configuration, tokens.access_token, claims.sub),
            catch: (cause) => new ExternalFailure({ what: "userinfo", cause })
          }).pipe(Effect.catchAll((failure) => incomplete(failure.what)(failure.detail)))
          email = info.email
          emailVerified = info.email_verified
          name = name ?? info.name
        }
        if (typeof email !== "string" || !isEmail(email)) {
          return yield* new IdpFailed({ message: "The identity provider did not share an email address" })
        }
        if (emailVerified !== true) {
          return yield* new UnverifiedEmail({ message: "The identity provider has not verified this email address" })
        }
        const { newUser, userId } = yield* users.signedIn(email, typeof name === "string" ? name.slice(0, 200) : null)
        const session = yield* sessions.start(userId, origin)
        return { sessionToken: session.token, userId, newUser }
      })

    return { start, callback, configured: Option.isSome(config.idp) } as const
  })
}) {}
