import { OAuth2Server } from "oauth2-mock-server"

/**
 * A real OpenID Connect provider on loopback (oauth2-mock-server): discovery, JWKS,
 * authorization with PKCE, signed ID tokens. `nextUser` sets the claims of the next sign-in.
 */
export interface TestIdp {
  readonly issuer: string
  readonly clientId: string
  readonly clientSecret: string
  /** Claims put in the next ID token (email, email_verified, name...). */
  readonly nextUser: (claims: Record<string, unknown>) => void
  /** Makes the provider's authorize step answer with an OAuth error instead of a code. */
  readonly failNextAuthorization: (error: string) => void
  readonly close: () => Promise<void>
}

export const startIdp = async (): Promise<TestIdp> => {
  const server = new OAuth2Server()
  await server.issuer.keys.generate("RS256")
  await server.start(0, "127.0.0.1")
  const issuer = server.issuer.url!
  let claims: Record<string, unknown> = {}
  let authorizationError: string | undefined
  server.service.on("beforeTokenSigning", (token: { payload: Record<string, unknown> }) => {
    Object.assign(token.payload, claims)
  })
  server.service.on("beforeAuthorizeRedirect", (redirect: { url: URL }) => {
    if (authorizationError !== undefined) {
      redirect.url.searchParams.delete("code")
      redirect.url.searchParams.set("error", authorizationError)
      authorizationError = undefined
    }
  })
  return {
    issuer,
    clientId: "service-client",
    clientSecret: "service-client-secret-" + Math.random().toString(36).slice(2),
    nextUser: (next) => {
      claims = next
    },
    failNextAuthorization: (error) => {
      authorizationError = error
    },
    close: () => server.stop()
  }
}
