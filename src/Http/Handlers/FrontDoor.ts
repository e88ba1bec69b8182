import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { SERVICE_VERSION } from "../../Domain/ServiceVersion.js"
import { AuthConfig } from "../../Services/Auth/AuthConfig.js"
import { PublicUrl } from "../../Services/PublicUrl.js"

const SERVICE_NAME = "Agent Purchasing and Gateway Service"

/** Where a newcomer goes from the front door. */
const linksFor = (baseUrl: string, dashboardPath: string) => ({
  dashboard: `${baseUrl}${dashboardPath}`,
  docs: `${baseUrl}/docs`,
  openapi: `${baseUrl}/openapi.json`,
  errors: `${baseUrl}/docs/errors`,
  status: `${baseUrl}/v1/status`
})

const labels: Record<keyof ReturnType<typeof linksFor>, string> = {
  dashboard: "Dashboard: run your org",
  docs: "API reference",
  openapi: "OpenAPI document",
  errors: "Error codes",
  status: "Service status"
}

const page = (links: ReturnType<typeof linksFor>) =>
  `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${SERVICE_NAME}</title>
<meta name="viewport" content="width=device-width,initial-scale=1">
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;line-height:1.5}
li{margin:.3rem 0}</style></head>
<body><h1>${SERVICE_NAME}</h1>
<p>Version ${SERVICE_VERSION}. Software agents buy verified data results and call provider APIs with prepaid credits,
under the budgets and approvals their owners set.</p>
<ul>
${
    Object.entries(links).map(([key, href]) => `<li><a href="${href}">${labels[key as keyof typeof labels]}</a></li>`)
      .join("\n")
  }
</ul></body></html>`

const wantsJson = (accept: string | undefined) => {
  if (accept === undefined) return false
  const json = accept.indexOf("application/json")
  const html = accept.indexOf("text/html")
  return json !== -1 && (html === -1 || json < html)
}

/** `GET /`: a small page naming the service and linking its parts; JSON for `Accept: application/json`. */
export const FrontDoorLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const config = yield* AuthConfig
    const links = linksFor(yield* PublicUrl, config.dashboardPath)
    const vary = HttpServerResponse.setHeader("vary", "Accept")
    const html = vary(HttpServerResponse.html(page(links)))
    const json = vary(HttpServerResponse.unsafeJson({ name: SERVICE_NAME, version: SERVICE_VERSION, links }))
    yield* router.get(
      "/",
      Effect.map(HttpServerRequest.HttpServerRequest, (request) => wantsJson(request.headers["accept"]) ? json : html)
    )
  })
)
