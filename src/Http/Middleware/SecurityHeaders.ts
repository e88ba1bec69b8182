import { HttpServerResponse } from "@effect/platform"

/**
 * Headers the edge adds to answers (see docs/decisions.md, "Framing and HSTS"):
 * - every HTML answer may not be framed by any page (`X-Frame-Options: DENY` for older
 *   browsers, `frame-ancestors 'none'` in its Content-Security-Policy), so no other site
 *   can lay a page of ours (a one-click approval, the dashboard) under its own buttons;
 * - in production every answer carries `Strict-Transport-Security` for a year, so a browser
 *   that has seen the service once never speaks plain HTTP to it (and never sends the
 *   session cookie over it). Subdomains are left out: they may be other services'.
 */
export const HSTS = "max-age=31536000"

const FRAME_ANCESTORS = "frame-ancestors 'none'"

const contentTypeOf = (response: HttpServerResponse.HttpServerResponse): string | undefined =>
  response.headers["content-type"] ?? ("contentType" in response.body ? response.body.contentType : undefined)

export const isHtml = (response: HttpServerResponse.HttpServerResponse): boolean =>
  contentTypeOf(response)?.split(";", 1)[0]?.trim().toLowerCase() === "text/html"

/** A page's own policy keeps its other directives; one without `frame-ancestors` gets it added. */
const withFrameAncestors = (policy: string | undefined): string =>
  policy === undefined || policy.trim() === ""
    ? FRAME_ANCESTORS
    : /(^|;)\s*frame-ancestors\s/i.test(policy)
    ? policy
    : `${policy.replace(/;\s*$/, "")}; ${FRAME_ANCESTORS}`

export const withSecurityHeaders = (
  response: HttpServerResponse.HttpServerResponse,
  production: boolean
): HttpServerResponse.HttpServerResponse => {
  let answered = response
  if (isHtml(response)) {
    answered = HttpServerResponse.setHeaders(answered, {
      "x-frame-options": "DENY",
      "content-security-policy": withFrameAncestors(response.headers["content-security-policy"])
    })
  }
  return production ? HttpServerResponse.setHeader(answered, "strict-transport-security", HSTS) : answered
}
