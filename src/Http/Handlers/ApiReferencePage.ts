import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { escapeHtml } from "../../Domain/Html.js"
import { PublicUrl } from "../../Services/PublicUrl.js"
import { documentFor } from "../OpenApi/Document.js"
import { dashboardLook, SERVICE_PAGE_CSP, servicePage } from "./ServicePage.js"

/**
 * `GET /docs`: the API reference, written from the OpenAPI document `/openapi.json` serves
 * (each endpoint's summary and description are its annotations in `Groups/`), as one
 * server-rendered page in the dashboard's look: the groups, each endpoint with its
 * credentials, parameters, body and answers, and the records they name. No script, nothing
 * from another origin; headings in order, links and text readable at the dashboard's
 * contrast, so it passes axe-core as the dashboard does.
 */

type Json = { readonly [key: string]: any }

const METHODS = ["get", "post", "put", "patch", "delete"] as const

/** Backticks in the document's prose are code. */
const prose = (text: unknown) =>
  typeof text === "string"
    ? escapeHtml(text).replace(/`([^`]+)`/g, (_match, code: string) => `<code>${code}</code>`)
    : ""

const slug = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "")

const refName = (ref: string) => ref.slice(ref.lastIndexOf("/") + 1)

/** An error record's name (`Error_not_found`) leads to its code on the error page. */
const errorCodeOf = (name: string) => name.startsWith("Error_") ? name.slice("Error_".length) : undefined

const schemaLink = (name: string) => {
  const code = errorCodeOf(name)
  return code === undefined
    ? `<a href="#schema-${slug(name)}">${escapeHtml(name)}</a>`
    : `<a href="/docs/errors#${escapeHtml(code)}"><code>${escapeHtml(code)}</code></a>`
}

/** A schema's type in a few words, records linked: "array of Agent", "string (uuid)", "test | live". */
const typeText = (schema: Json | undefined): string => {
  if (schema === undefined) return "any"
  if (typeof schema["$ref"] === "string") return schemaLink(refName(schema["$ref"]))
  const alternatives = schema["anyOf"] ?? schema["oneOf"]
  if (Array.isArray(alternatives)) return alternatives.map((s: Json) => typeText(s)).join(" or ")
  if (Array.isArray(schema["enum"])) {
    return schema["enum"].map((v: unknown) => `<code>${escapeHtml(JSON.stringify(v))}</code>`).join(" | ")
  }
  if (schema["const"] !== undefined) return `<code>${escapeHtml(JSON.stringify(schema["const"]))}</code>`
  const type = Array.isArray(schema["type"]) ? schema["type"].join(" or ") : schema["type"]
  if (type === "array") return `array of ${typeText(schema["items"])}`
  if (type === undefined) return schema["properties"] === undefined ? "any" : "object"
  return `${escapeHtml(String(type))}${
    schema["format"] === undefined ? "" : ` (${escapeHtml(String(schema["format"]))})`
  }`
}

/** An object's fields, each with its type and description; nested objects inline, a few levels deep. */
const fieldsHtml = (schema: Json, depth = 0): string => {
  const properties: Json = schema["properties"] ?? {}
  const required = new Set<string>(schema["required"] ?? [])
  const names = Object.keys(properties)
  if (names.length === 0) return `<p class="muted">${typeText(schema)}</p>`
  return `<ul class="fields">${
    names.map((name) => {
      const field: Json = properties[name]
      const nested = depth < 2 && field["properties"] !== undefined ? fieldsHtml(field, depth + 1) : ""
      return `<li><code>${escapeHtml(name)}</code> <span class="muted">${typeText(field)}${
        required.has(name) ? "" : ", optional"
      }</span>${field["description"] === undefined ? "" : ` ${prose(field["description"])}`}${nested}</li>`
    }).join("")
  }</ul>`
}

/** A body or answer: a record by name, or the fields of an inline object. */
const bodyHtml = (schema: Json | undefined) =>
  schema === undefined
    ? ""
    : schema["properties"] === undefined
    ? `<p>${typeText(schema)}</p>`
    : fieldsHtml(schema)

const jsonSchemaOf = (content: Json | undefined): Json | undefined => {
  if (content === undefined) return undefined
  const first = Object.values(content)[0] as Json | undefined
  return first?.["schema"]
}

const operationHtml = (spec: Json, path: string, method: string, operation: Json) => {
  const id = `op-${slug(operation["operationId"] ?? `${method} ${path}`)}`
  const credentials: Array<string> = (operation["security"] ?? spec["security"] ?? [])
    .flatMap((requirement: Json) => Object.keys(requirement))
  const parameters: Array<Json> = operation["parameters"] ?? []
  const body = jsonSchemaOf(operation["requestBody"]?.["content"])
  const responses = Object.entries(operation["responses"] ?? {}) as Array<[string, Json]>
  const successes = responses.filter(([status]) => status.startsWith("2") || status.startsWith("3"))
  const failures = responses.filter(([status]) => !status.startsWith("2") && !status.startsWith("3"))
  return `<article class="card stack operation" id="${id}" aria-labelledby="${id}-title">
<h3 id="${id}-title"><span class="badge method">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h3>
<p><strong>${prose(operation["summary"])}</strong>${
    operation["description"] === undefined ? "" : ` ${prose(operation["description"])}`
  }</p>
<p class="muted">${
    credentials.length === 0
      ? "No credential."
      : `Credential: ${
        credentials.map((name) => `<a href="#credential-${slug(name)}">${escapeHtml(name)}</a>`).join(", ")
      }.`
  }</p>
${
    parameters.length === 0 ?
      "" :
      `<h4>Parameters</h4><ul class="fields">${
        parameters.map((parameter) =>
          `<li><code>${escapeHtml(parameter["name"])}</code> <span class="muted">${escapeHtml(parameter["in"])}, ${
            typeText(parameter["schema"])
          }${parameter["required"] === true ? "" : ", optional"}</span>${
            parameter["description"] === undefined || parameter["description"] === parameter["schema"]?.["description"]
              ? ` ${prose(parameter["schema"]?.["description"])}`
              : ` ${prose(parameter["description"])}`
          }</li>`
        ).join("")
      }</ul>`
  }
${body === undefined ? "" : `<h4>Body</h4>${bodyHtml(body)}`}
<h4>Answers</h4>
${
    successes.map(([status, response]) =>
      `<p><strong>${escapeHtml(status)}</strong> ${prose(response["description"])}</p>${
        bodyHtml(jsonSchemaOf(response["content"]))
      }`
    ).join("\n")
  }
${
    failures.length === 0 ?
      "" :
      `<p>Refusals: ${
        failures.map(([status, response]) =>
          `<strong>${escapeHtml(status)}</strong> ${typeText(jsonSchemaOf(response["content"]))}`
        )
          .join(", ")
      }.</p>`
  }
</article>`
}

/** The whole page's main content. */
export const apiReferenceBody = (spec: Json): string => {
  const operations = Object.entries(spec["paths"] as Json).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method] !== undefined).map((method) => ({ path, method, operation: item[method] }))
  )
  const tagNames: Array<string> = [
    ...(spec["tags"] ?? []).map((tag: Json) => tag["name"]),
    ...operations.flatMap(({ operation }) => operation["tags"] ?? [])
  ].filter((name, index, all) => all.indexOf(name) === index)
  const tagOf = (name: string): Json => (spec["tags"] ?? []).find((tag: Json) => tag["name"] === name) ?? { name }
  const schemes = Object.entries(spec["components"]?.["securitySchemes"] ?? {}) as Array<[string, Json]>
  const records = (Object.entries(spec["components"]?.["schemas"] ?? {}) as Array<[string, Json]>)
    .filter(([name]) => errorCodeOf(name) === undefined)
  const server = spec["servers"]?.[0]?.["url"]
  return `<div class="stack api-reference">
<h1>${escapeHtml(spec["info"]["title"])} API</h1>
<p>${prose(spec["info"]["description"])} Version ${escapeHtml(spec["info"]["version"])}.${
    server === undefined ? "" : ` Address: <code>${escapeHtml(server)}</code>.`
  } The same as an OpenAPI 3.1 document: <a href="/openapi.json">/openapi.json</a>. Every error code:
<a href="/docs/errors">/docs/errors</a>.</p>
<nav class="card" aria-label="API groups"><h2>Groups</h2><ul class="contents">${
    tagNames.map((name) => `<li><a href="#tag-${slug(name)}">${escapeHtml(name)}</a></li>`).join("")
  }<li><a href="#credentials">Credentials</a></li><li><a href="#records">Records</a></li></ul></nav>
<section class="stack" aria-labelledby="credentials"><h2 id="credentials">Credentials</h2><ul class="fields">${
    schemes.map(([name, scheme]) =>
      `<li id="credential-${slug(name)}"><code>${escapeHtml(name)}</code> <span class="muted">${
        scheme["type"] === "http"
          ? `Authorization: Bearer ${escapeHtml(scheme["bearerFormat"] ?? "")}`
          : `${escapeHtml(scheme["in"] ?? "")} ${escapeHtml(scheme["name"] ?? "")}`
      }</span> ${prose(scheme["description"])}</li>`
    ).join("")
  }</ul></section>
${
    tagNames.map((name) => {
      const tag = tagOf(name)
      const mine = operations.filter(({ operation }) => (operation["tags"] ?? []).includes(name))
      return `<section class="stack" aria-labelledby="tag-${slug(name)}"><h2 id="tag-${slug(name)}">${
        escapeHtml(name)
      }</h2>${tag["description"] === undefined ? "" : `<p>${prose(tag["description"])}</p>`}
${mine.map(({ method, operation, path }) => operationHtml(spec, path, method, operation)).join("\n")}</section>`
    }).join("\n")
  }
<section class="stack" aria-labelledby="records"><h2 id="records">Records</h2>
${
    records.map(([name, schema]) =>
      `<article class="card stack" id="schema-${slug(name)}" aria-labelledby="schema-${
        slug(name)
      }-title"><h3 id="schema-${slug(name)}-title">${escapeHtml(name)}</h3>${
        schema["description"] === undefined ? "" : `<p>${prose(schema["description"])}</p>`
      }${bodyHtml(schema)}</article>`
    ).join("\n")
  }</section></div>`
}

export const ApiReferencePageLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const html = servicePage(yield* dashboardLook, {
      title: "API reference",
      layout: "wide",
      body: apiReferenceBody(documentFor(yield* PublicUrl) as unknown as Json)
    })
    const response = HttpServerResponse.text(html, {
      contentType: "text/html; charset=utf-8",
      headers: {
        "content-security-policy": SERVICE_PAGE_CSP,
        "x-content-type-options": "nosniff",
        "referrer-policy": "same-origin",
        "cache-control": "no-cache"
      }
    })
    yield* router.get("/docs", Effect.succeed(response))
  })
)
