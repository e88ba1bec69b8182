import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { CallToolRequestSchema, type CallToolResult, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Either, JSONSchema, Runtime, Schema } from "effect"
import { Availability, Category } from "../../Domain/Catalogue.js"
import { CallRequest } from "../../Domain/GatewayCall.js"
import { InvalidInput } from "../../Errors/ApiErrors.js"
import { encodeApiError, isApiError } from "../../Errors/Wire.js"
import type { AuthenticatedAgent } from "../../Services/Auth/Current.js"
import { Catalogue } from "../../Services/Catalogue/Catalogue.js"
import { Gateway } from "../../Services/Gateway/Gateway.js"
import { PublicUrl } from "../../Services/PublicUrl.js"
import { makeAgentRequestAuthentication } from "../Middleware/Authentication.js"
import { MAX_BODY_BYTES } from "../Middleware/Edge.js"
import { errorResponse } from "../Middleware/ErrorResponses.js"
import { mcpChallenge } from "./ProtectedResource.js"

/**
 * The MCP server at `POST /mcp` (Streamable HTTP, stateless: one server and transport per
 * request, JSON answers). The route sits beside the HttpApi groups, so it applies the
 * agent endpoints' authentication itself (401 without a valid agent key, 403
 * `ip_not_allowed` off the allowlist, 600 requests a minute); the edge has already refused
 * org keys (403) and other methods (405).
 *
 * Tools: `search_endpoints` (the catalogue, priced for the agent's plan) and
 * `call_endpoint` (a gateway call, exactly as `POST /v1/call`).
 */

export const SearchArguments = Schema.Struct({
  q: Schema.optional(Schema.String.annotations({ description: "Words that must all match the id, provider or name" })),
  category: Schema.optional(Category),
  provider: Schema.optional(Schema.String.annotations({ description: "Provider id" })),
  availability: Schema.optional(Availability)
})

/**
 * A tool's input as JSON Schema. The struct is rebuilt from its fields so that a named schema
 * (`identifier`) is inlined: MCP wants `type: "object"` at the top, not a `$ref`.
 */
const inputSchema = <Fields extends Schema.Struct.Fields>(schema: Schema.Struct<Fields>) => {
  const { $schema: _ignored, ...rest } = JSONSchema.make(Schema.Struct(schema.fields)) as unknown as Record<
    string,
    unknown
  >
  return rest as { type: "object"; properties?: Record<string, object>; required?: Array<string> }
}

const tools = [
  {
    name: "search_endpoints",
    description: "Search the gateway catalogue of provider endpoints. Every word of `q` must match the id, " +
      "provider or name. Answers endpoint records with method, path, path_params and price_per_call (credits).",
    inputSchema: inputSchema(SearchArguments)
  },
  {
    name: "call_endpoint",
    description: "Call a live catalogue endpoint with the provider's own parameters. The price is held and " +
      "charged only when the provider answers; failures, refusals and timeouts are refunded.",
    inputSchema: inputSchema(CallRequest)
  }
]

const jsonResult = (value: unknown, isError = false): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(value) }],
  ...(isError ? { isError: true } : { structuredContent: value as Record<string, unknown> })
})

export const McpRouteLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const gateway = yield* Gateway
    const catalogue = yield* Catalogue
    const authenticateAgent = yield* makeAgentRequestAuthentication
    const baseUrl = yield* PublicUrl

    /** Runs a tool's effect to a tool result; API errors become `isError` results with the error body. */
    const toolResult = <A, E>(runtime: Runtime.Runtime<never>, effect: Effect.Effect<A, E>) =>
      Runtime.runPromise(runtime)(
        effect.pipe(
          Effect.map((value) => jsonResult(value)),
          Effect.catchAll((error) =>
            isApiError(error)
              ? Effect.map(encodeApiError(error), ({ body }) => jsonResult(body, true))
              : Effect.die(error)
          )
        )
      )

    const decodeArguments = <A, I>(schema: Schema.Schema<A, I>, args: unknown) =>
      Either.match(Schema.decodeUnknownEither(schema)(args ?? {}), {
        onLeft: (error) => Effect.fail(new InvalidInput({ message: `Invalid arguments: ${error.message}` })),
        onRight: Effect.succeed
      })

    const makeServer = (agent: AuthenticatedAgent, runtime: Runtime.Runtime<never>) => {
      const server = new Server({ name: "agent-gateway", version: "0.1.0" }, { capabilities: { tools: {} } })
      server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }))
      server.setRequestHandler(CallToolRequestSchema, async (request) => {
        switch (request.params.name) {
          case "search_endpoints":
            return toolResult(
              runtime,
              Effect.flatMap(decodeArguments(SearchArguments, request.params.arguments), (args) =>
                Effect.map(catalogue.search(args, agent.org_plan), (endpoints) => ({ endpoints })))
            )
          case "call_endpoint":
            return toolResult(
              runtime,
              Effect.flatMap(decodeArguments(CallRequest, request.params.arguments), (args) =>
                gateway.call(agent, args))
            )
          default:
            return jsonResult(
              { error: { code: "invalid_input", message: `Unknown tool ${request.params.name}` } },
              true
            )
        }
      })
      return server
    }

    // The edge answers other methods (405, Allow: POST) and org keys (403) before this runs.
    const handler = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const agent = yield* authenticateAgent("The MCP server needs an agent key (sk_test_... or sk_live_...)")

      const runtime = yield* Effect.runtime<never>()
      // The body is read here, under the edge's 1 MB limit, so a chunked body past it gets
      // the service's 413 `payload_too_large` (the edge maps the read failure) rather than
      // the MCP library's own error.
      const body = yield* request.text
      const webRequest = new Request(new URL(request.url, "http://localhost"), {
        method: request.method,
        headers: new Headers(request.headers as Record<string, string>),
        body
      })
      const server = makeServer(agent, runtime)
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
        maxRequestBodySize: MAX_BODY_BYTES
      })
      const response = yield* Effect.acquireUseRelease(
        Effect.promise(() => server.connect(transport)),
        () => Effect.promise(() => transport.handleRequest(webRequest)),
        () => Effect.promise(() => server.close())
      )
      return HttpServerResponse.fromWeb(response)
    })

    // A missing or unknown key tells MCP clients where to read how to authenticate.
    const challenged = handler.pipe(
      Effect.catchTag("unauthenticated", (error) =>
        Effect.succeed(
          errorResponse(baseUrl, "unauthenticated", error.message).pipe(
            HttpServerResponse.setHeader("www-authenticate", mcpChallenge(baseUrl))
          )
        ))
    )
    yield* router.all("/mcp", challenged)
  })
)
