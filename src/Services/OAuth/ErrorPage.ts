import { escapeHtml } from "../../Domain/Html.js"

/**
 * The page the authorization server shows a browser when a request cannot go back to its
 * client (an unknown or refused client, a bad redirect URI): the OAuth error and its
 * description, and for a client ID metadata document that could not be used, the reason
 * (too large, an address not allowed, no answer), which otherwise only the log would hold.
 * No third-party resource (the library's own page loads a web font).
 */
export const oauthErrorPage = (
  out: { readonly [name: string]: unknown },
  error: { readonly error_detail?: unknown }
): string => {
  const description = typeof out["error_description"] === "string" ? out["error_description"] : ""
  const detail = description.startsWith("client_id metadata document") && typeof error.error_detail === "string"
    ? { ...out, reason: error.error_detail }
    : out
  const lines = Object.entries(detail)
    .map(([name, value]) => `<p><strong>${escapeHtml(name)}</strong>: ${escapeHtml(String(value))}</p>`)
    .join("")
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>Sign-in cannot continue</title>
<style>body{font-family:system-ui,sans-serif;max-width:38rem;margin:3rem auto;padding:0 1rem;line-height:1.5}</style>
</head><body><h1>Sign-in cannot continue</h1>${lines}</body></html>`
}
