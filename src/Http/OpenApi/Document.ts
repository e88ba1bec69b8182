import { OpenApi } from "@effect/platform"
import { Api } from "../Api.js"
import { openApiErrorShapes } from "./ErrorShapes.js"
import { withoutFiller } from "./Filler.js"
import { documentSecurity } from "./Security.js"

/**
 * The finishing of the generated OpenAPI document: error shapes, one security scheme per
 * credential, no framework filler, a licence. Each operation's summary and description are
 * its endpoint's own annotations (`OpenApi.Summary`, `OpenApi.Description`, in `Groups/`). The `servers`
 * entry depends on the running service's address, so `documentFor` adds it when serving.
 */
const withLicence = (spec: Record<string, any>): Record<string, any> => {
  spec.info = { ...spec.info, license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" } }
  return spec
}

export const finishOpenApi = (spec: Record<string, any>): Record<string, any> =>
  withLicence(withoutFiller(documentSecurity(openApiErrorShapes(spec))))

/**
 * The contract as the service documents it: its OpenAPI document finished as above. The
 * service serves this one (`HttpApiBuilder.api`, so `/docs` reads it too), and
 * `/openapi.json` and the MCP tools read its document; the contract itself stays free of
 * the finishing, which is the service's.
 */
export const DocumentedApi = Api.annotate(OpenApi.Transform, finishOpenApi)

/** The document served at `/openapi.json`, with this service's public address as its server. */
export const documentFor = (baseUrl: string): OpenApi.OpenAPISpec => ({
  ...OpenApi.fromApi(DocumentedApi),
  servers: [{ url: baseUrl, description: "This service" }]
})
