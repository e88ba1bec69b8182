import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { escapeHtml } from "../../Domain/Html.js"
import { AuthConfig } from "../../Services/Auth/AuthConfig.js"
import { DASHBOARD_BUILD_DIR } from "./DashboardFiles.js"

/**
 * The look of the dashboard for the pages the service renders itself (the MCP sign-in and
 * consent pages, the API reference): the dashboard's own built stylesheet and icon, its top
 * bar and a skip link to the main content. The stylesheet's name changes with every build,
 * so it is read from the built page shell once, when the routes are made.
 */
export interface DashboardLook {
  /** The dashboard's address (the brand links there). */
  readonly home: string
  /** The built stylesheet's path; undefined when the dashboard is not built (the page stays plain). */
  readonly stylesheet: string | undefined
  readonly icon: string
}

/** The stylesheet the built shell links (`./assets/index-<hash>.css`), as a path below the build folder. */
export const builtStylesheet = (dir: string = DASHBOARD_BUILD_DIR): string | undefined => {
  const index = path.join(dir, "index.html")
  if (!fs.existsSync(index)) return undefined
  const href = /<link rel="stylesheet"[^>]*href="\.\/([^"]+\.css)"/.exec(fs.readFileSync(index, "utf8"))?.[1]
  return href === undefined || !fs.existsSync(path.join(dir, href)) ? undefined : href
}

export const dashboardLook: Effect.Effect<DashboardLook, never, AuthConfig> = Effect.map(
  AuthConfig,
  ({ dashboardPath }) => {
    const prefix = dashboardPath === "/" ? "/" : `${dashboardPath}/`
    const stylesheet = builtStylesheet()
    return {
      home: prefix,
      stylesheet: stylesheet === undefined ? undefined : `${prefix}${stylesheet}`,
      icon: `${prefix}favicon.svg`
    }
  }
)

/** What these pages load: the service's own stylesheet and icon, nothing else; never framed. */
export const SERVICE_PAGE_CSP = "default-src 'none'; style-src 'self'; img-src 'self'; frame-ancestors 'none'"

/**
 * A whole page: head, skip link, the dashboard's top bar, and `body` as the main content
 * (`layout` "card": one narrow card in the middle, as the dashboard's sign-in; "wide": the
 * content column). `head` adds lines to the head (robots, referrer).
 */
export const servicePage = (look: DashboardLook, options: {
  readonly title: string
  readonly body: string
  readonly layout: "card" | "wide"
  readonly head?: string
}) =>
  `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
${options.head ?? ""}<title>${escapeHtml(options.title)} · Agent Gateway</title>
<link rel="icon" type="image/svg+xml" href="${escapeHtml(look.icon)}">
${look.stylesheet === undefined ? "" : `<link rel="stylesheet" href="${escapeHtml(look.stylesheet)}">`}
</head><body>
<a class="skip-link" href="#main">Skip to main content</a>
<div class="shell"><header class="topbar"><a class="brand" href="${escapeHtml(look.home)}">Agent Gateway</a></header>
${
    options.layout === "card"
      ? `<main id="main" class="center" tabindex="-1"><div class="card narrow stack">${options.body}</div></main>`
      : `<main id="main" class="content" tabindex="-1">${options.body}</main>`
  }
</div></body></html>`
