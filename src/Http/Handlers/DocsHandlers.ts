import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { webhookEventJsonSchema } from "../../Domain/Events.js"
import { escapeHtml } from "../../Domain/Html.js"
import { errorCatalogue, errorCodes } from "../../Errors/ErrorCatalogue.js"
import { Api } from "../Api.js"

/** `GET /docs/errors`: every error code with its status, meaning and whether to retry. */
export const errorsPage = (): string => {
  const rows = errorCodes.map((code) => {
    const entry = errorCatalogue[code]
    return `<tr id="${code}"><td><a href="#${code}"><code>${code}</code></a></td><td>${entry.status}</td>` +
      `<td>${escapeHtml(entry.meaning)}</td><td>${entry.retryable ? "yes" : "no"}</td></tr>`
  })
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Error codes</title>
<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.4rem;text-align:left;vertical-align:top}
tr:target{background:#fff6d5}</style></head>
<body><h1>Error codes</h1>
<p>Every error answer has the body <code>{"error":{"code","message","doc_url","retryable"}}</code>.
Retry only when <code>retryable</code> is true; on 429 wait for <code>Retry-After</code> seconds.</p>
<table><thead><tr><th>Code</th><th>HTTP status</th><th>Meaning</th><th>Retry</th></tr></thead>
<tbody>
${rows.join("\n")}
</tbody></table></body></html>`
}

export const DocsHandlers = HttpApiBuilder.group(Api, "docs", (handlers) => {
  const page = errorsPage()
  const schema = webhookEventJsonSchema()
  return handlers
    .handle("errors", () => Effect.succeed(page))
    .handle("webhookEventSchema", () => Effect.succeed(schema))
})
