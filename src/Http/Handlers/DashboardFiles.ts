import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { projectRoot } from "../../ProjectRoot.js"
import { AuthConfig } from "../../Services/Auth/AuthConfig.js"

/** Where `npm run build:web` writes the dashboard (web/dist). */
export const DASHBOARD_BUILD_DIR = fileURLToPath(new URL("web/dist", projectRoot))

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8"
}

/**
 * Only what the app needs: its own scripts, styles and API; no inline script, no framing,
 * no third-party origin. (React sets style properties through the DOM, which CSP allows.)
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'"
].join("; ")

interface StaticFile {
  readonly body: Uint8Array
  readonly contentType: string
}

/** Every built file by its path under the build folder ("assets/index-1a2b.js"). */
const readBuild = (dir: string): Map<string, StaticFile> => {
  const files = new Map<string, StaticFile>()
  if (!fs.existsSync(dir)) return files
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const full = path.join(entry.parentPath, entry.name)
    const relative = path.relative(dir, full).split(path.sep).join("/")
    files.set(relative, {
      body: fs.readFileSync(full),
      contentType: contentTypes[path.extname(entry.name)] ?? "application/octet-stream"
    })
  }
  return files
}

/** The page shell, told where it lives: assets resolve against `<base>`, routes below it. */
const shellFor = (indexHtml: string, prefix: string) => indexHtml.replace("<head>", `<head><base href="${prefix}">`)

const notBuilt = HttpServerResponse.text(
  "The dashboard is not built: run `npm run build:web` (npm start and npm test do it first).",
  { status: 503, headers: { "cache-control": "no-store", "retry-after": "60" } }
)

/**
 * The owner dashboard at DASHBOARD_PATH: hashed assets cached for a year (their names change
 * with their content), every other path answered with the page shell (the app routes in the
 * browser), never cached, under a strict Content-Security-Policy.
 */
export const DashboardFilesLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const { dashboardPath } = yield* AuthConfig
    const prefix = dashboardPath === "/" ? "/" : `${dashboardPath}/`
    const files = readBuild(DASHBOARD_BUILD_DIR)
    const index = files.get("index.html")
    const securityHeaders = {
      "content-security-policy": DASHBOARD_CSP,
      "x-content-type-options": "nosniff",
      "referrer-policy": "same-origin",
      "x-frame-options": "DENY"
    }
    const shell = index === undefined
      ? notBuilt
      : HttpServerResponse.text(shellFor(new TextDecoder().decode(index.body), prefix), {
        contentType: "text/html; charset=utf-8",
        headers: { ...securityHeaders, "cache-control": "no-cache" }
      })

    const serve = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
      const pathname = request.url.split("?", 1)[0] ?? ""
      const relative = pathname.startsWith(prefix) ? pathname.slice(prefix.length) : ""
      const file = relative === "index.html" ? undefined : files.get(relative)
      if (file !== undefined) {
        // Hashed names change with their content; the rest (the icon) is checked daily.
        const cache = relative.startsWith("assets/") ? "public, max-age=31536000, immutable" : "public, max-age=86400"
        return HttpServerResponse.uint8Array(file.body, {
          contentType: file.contentType,
          headers: { ...securityHeaders, "cache-control": cache }
        })
      }
      if (relative.startsWith("assets/")) {
        return HttpServerResponse.text("No such file", { status: 404, headers: { "cache-control": "no-store" } })
      }
      return shell
    })
    // Browsers ask the site's root for its icon, whatever page they are on: the dashboard's.
    const icon = files.get("favicon.svg")
    yield* router.get(
      "/favicon.ico",
      Effect.succeed(
        icon === undefined
          ? HttpServerResponse.text("No icon", { status: 404, headers: { "cache-control": "no-store" } })
          : HttpServerResponse.uint8Array(icon.body, {
            contentType: icon.contentType,
            headers: { "x-content-type-options": "nosniff", "cache-control": "public, max-age=86400" }
          })
      )
    )
    yield* router.get(dashboardPath as `/${string}`, serve)
    yield* router.get(`${prefix}*` as `/${string}`, serve)
  })
)
