import { type HttpApi, type HttpApiGroup, OpenApi } from "@effect/platform"
import { openApiErrorShapes } from "./ErrorShapes.js"
import { withoutFiller } from "./Filler.js"
import { operationDocs } from "./OperationDocs.js"
import { documentSecurity } from "./Security.js"

/**
 * The finishing of the generated OpenAPI document: error shapes, one security scheme per
 * credential, summaries and descriptions, no framework filler, a licence. The `servers`
 * entry depends on the running service's address, so `documentFor` adds it when serving.
 */
const withOperationDocs = (spec: Record<string, any>): Record<string, any> => {
  for (const path of Object.values<any>(spec.paths ?? {})) {
    for (const operation of Object.values<any>(path)) {
      const entry = operationDocs[operation.operationId]
      if (entry === undefined) continue
      operation.summary = entry.summary
      operation.description ??= entry.description
    }
  }
  return spec
}

const withLicence = (spec: Record<string, any>): Record<string, any> => {
  spec.info = { ...spec.info, license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" } }
  return spec
}

export const finishOpenApi = (spec: Record<string, any>): Record<string, any> =>
  withLicence(withOperationDocs(withoutFiller(documentSecurity(openApiErrorShapes(spec)))))

/** The document served at `/openapi.json`, with this service's public address as its server. */
export const documentFor = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>,
  baseUrl: string
): OpenApi.OpenAPISpec => ({
  ...OpenApi.fromApi(api),
  servers: [{ url: baseUrl, description: "This service" }]
})
