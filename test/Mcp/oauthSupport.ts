import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js"
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens
} from "@modelcontextprotocol/sdk/shared/auth.js"
import { execFileSync } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { linkIn } from "../support/smtp.js"
import type { World } from "../support/world.js"

/**
 * What an MCP client keeps between runs, in memory: the SDK's OAuth client provider,
 * recording the authorization URL it is asked to open instead of opening a browser.
 */
export class MemoryOAuthProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined
  saved: OAuthTokens | undefined
  verifier = ""
  authorizationUrl: URL | undefined
  constructor(readonly redirect = "http://127.0.0.1:7777/callback") {}
  get redirectUrl() {
    return this.redirect
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "Test MCP client",
      redirect_uris: [this.redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none"
    }
  }
  clientInformation() {
    return this.client
  }
  saveClientInformation(client: OAuthClientInformationMixed) {
    this.client = client
  }
  tokens() {
    return this.saved
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    return this.verifier
  }
}

/** A browser's cookies for one site, and requests that keep them (redirects are not followed). */
export const makeBrowser = (world: World) => {
  const jar = new Map<string, string>()
  const origin = new URL(world.server.baseUrl).origin
  const send = async (url: string | URL, init: { method?: string; form?: Record<string, string> } = {}) => {
    const target = new URL(url, origin)
    const headers: Record<string, string> = {}
    if (jar.size > 0) headers["cookie"] = [...jar].map(([name, value]) => `${name}=${value}`).join("; ")
    if (init.form !== undefined) {
      headers["content-type"] = "application/x-www-form-urlencoded"
      headers["origin"] = origin
    }
    const response = await fetch(target, {
      method: init.method ?? (init.form === undefined ? "GET" : "POST"),
      headers,
      body: init.form === undefined ? undefined : new URLSearchParams(init.form).toString(),
      redirect: "manual"
    })
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ""] = cookie.split(";")
      const at = pair.indexOf("=")
      const value = pair.slice(at + 1)
      if (value === "" || /max-age=0|expires=thu, 01 jan 1970/i.test(cookie)) jar.delete(pair.slice(0, at))
      else jar.set(pair.slice(0, at), value)
    }
    return { status: response.status, location: response.headers.get("location"), text: await response.text() }
  }
  return { send, jar }
}

export type Browser = ReturnType<typeof makeBrowser>

/** The sign-in link mailed to `email` since `before` mails, from a consent page (it opens the interaction's `/verify`). */
export const consentSignInLink = async (world: World, email: string, before: number) => {
  const mail = await world.smtp.waitFor(
    email,
    (m) => world.smtp.messages.indexOf(m) >= before && /\/oauth\/interaction\/\S+\/verify\?token=/.test(m.text)
  )
  return linkIn(mail, "/verify?token=")
}

/** Signs the browser in by the mailed link the consent page asks for; answers the page the link leads back to. */
export const signInOnConsentPage = async (world: World, browser: Browser, interactionUrl: string, email: string) => {
  const before = world.smtp.messages.length
  const asked = await browser.send(`${interactionUrl}/sign-in`, { form: { email } })
  if (asked.status !== 200) throw new Error(`sign-in answered ${asked.status}: ${asked.text}`)
  const opened = await browser.send(await consentSignInLink(world, email, before))
  if (opened.status !== 303 || opened.location !== new URL(interactionUrl, world.server.baseUrl).href) {
    throw new Error(`the mailed link answered ${opened.status} to ${opened.location}: ${opened.text}`)
  }
  return browser.send(opened.location)
}

/** Follows the authorization URL to the consent page; answers the interaction's URL. */
export const openAuthorization = async (browser: Browser, url: URL | string) => {
  const first = await browser.send(url)
  if (first.status !== 303 || first.location === null) {
    throw new Error(`authorize answered ${first.status}: ${first.location ?? first.text}`)
  }
  return first.location
}

/** Follows redirects inside the service until one leaves it (the client's redirect URI). */
export const followToClient = async (browser: Browser, world: World, location: string) => {
  let next = location
  for (let hop = 0; hop < 5; hop++) {
    const url = new URL(next, world.server.baseUrl)
    if (url.origin !== new URL(world.server.baseUrl).origin) return url
    const answer = await browser.send(url)
    if (answer.location === null) throw new Error(`no redirect from ${url}: ${answer.status} ${answer.text}`)
    next = answer.location
  }
  throw new Error("too many redirects")
}

/** A PKCE pair (RFC 7636, S256). */
export const pkcePair = () => {
  const verifier = randomBytes(32).toString("base64url")
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") }
}

/** A certificate for `localhost` and 127.0.0.1, signed by itself (openssl), valid a day. */
const loopbackCertificate = () => {
  const dir = mkdtempSync(join(tmpdir(), "cimd-"))
  try {
    execFileSync("openssl", [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
      "-days",
      "1",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=DNS:localhost,IP:127.0.0.1"
    ], { stdio: "ignore" })
    return { key: readFileSync(join(dir, "key.pem"), "utf8"), cert: readFileSync(join(dir, "cert.pem"), "utf8") }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * An MCP client's website on loopback, over https: serves the client ID metadata documents
 * the test puts at paths, and counts the requests for each.
 */
export const startDocumentServer = async () => {
  const { cert, key } = loopbackCertificate()
  const documents = new Map<string, { readonly body: string; readonly headers?: Record<string, string> }>()
  const hits = new Map<string, number>()
  const server = https.createServer({ cert, key }, (request, response) => {
    const path = new URL(request.url ?? "/", "https://localhost").pathname
    hits.set(path, (hits.get(path) ?? 0) + 1)
    const document = documents.get(path)
    if (document === undefined) {
      response.writeHead(404).end()
      return
    }
    response.writeHead(200, { "content-type": "application/json", ...document.headers }).end(document.body)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    /** The certificate to trust (the service's ClientMetadataTrust). */
    cert,
    url: (path: string, host = "localhost") => `https://${host}:${port}${path}`,
    put: (path: string, body: unknown, headers?: Record<string, string>) =>
      void documents.set(path, { body: typeof body === "string" ? body : JSON.stringify(body), headers }),
    hits: (path: string) => hits.get(path) ?? 0,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

export type DocumentServer = Awaited<ReturnType<typeof startDocumentServer>>
