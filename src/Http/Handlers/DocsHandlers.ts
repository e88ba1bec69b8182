import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { webhookEventJsonSchema } from "../../Domain/Events.js"
import { escapeHtml } from "../../Domain/Html.js"
import { errorCatalogue, errorCodes } from "../../Errors/ErrorCatalogue.js"
import { Api } from "../Api.js"
import { type DashboardLook, dashboardLook, servicePage } from "./ServicePage.js"

/** `GET /docs/errors`: every error code with its status, meaning and whether to retry, in the dashboard's look. */
export const errorsPage = (look: DashboardLook): string => {
  const rows = errorCodes.map((code) => {
    const entry = errorCatalogue[code]
    return `<tr id="${code}"><td><a href="#${code}"><code>${code}</code></a></td><td>${entry.status}</td>` +
      `<td>${escapeHtml(entry.meaning)}</td><td>${entry.retryable ? "yes" : "no"}</td></tr>`
  })
  return servicePage(look, {
    title: "Error codes",
    layout: "wide",
    body: `<div class="stack error-codes"><h1>Error codes</h1>
<p>Every error answer has the body <code>{"error":{"code","message","doc_url","retryable"}}</code>.
Retry only when <code>retryable</code> is true; on 429 wait for <code>Retry-After</code> seconds.</p>
<div class="table-scroll" tabindex="0" role="region" aria-label="Error codes">
<table><thead><tr><th>Code</th><th>HTTP status</th><th>Meaning</th><th>Retry</th></tr></thead>
<tbody>
${rows.join("\n")}
</tbody></table></div></div>`
  })
}

export const DocsHandlers = HttpApiBuilder.group(Api, "docs", (handlers) =>
  Effect.gen(function*() {
    const page = errorsPage(yield* dashboardLook)
    const schema = webhookEventJsonSchema()
    return handlers
      .handle("errors", () => Effect.succeed(page))
      .handle("webhookEventSchema", () => Effect.succeed(schema))
  }))
