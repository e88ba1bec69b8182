import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { CallToolRequestSchema, type CallToolResult, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Runtime } from "effect"
import type { AuthenticatedAgent } from "../../Domain/Current.js"
import { credentialKindOf } from "../../Domain/Secrets.js"
import { InvalidInput } from "../../Errors/ApiErrors.js"
import { encodeApiError, isApiError } from "../../Errors/Wire.js"
import { Connections } from "../../Services/OAuth/Connections.js"
import { PublicUrl } from "../../Services/PublicUrl.js"
import { policies, RateLimiter } from "../../Services/RateLimiter/RateLimiter.js"
import { ClientAddress } from "../ClientAddress.js"
import { makeAgentRefusals } from "../Middleware/AgentRefusals.js"
import { makeAgentRequestAuthentication } from "../Middleware/Authentication.js"
import { MAX_BODY_BYTES } from "../Middleware/Edge.js"
import { errorResponse } from "../Middleware/ErrorResponses.js"
import { enforceRateLimit } from "../Middleware/RateLimits.js"
import { makeMcpOriginCheck } from "../Middleware/RequestSite.js"
import { bearerTokenOf } from "../PresentedCredential.js"
import { makeAgentTools } from "./AgentTools.js"
import { mcpChallenge } from "./ProtectedResource.js"

/**
 * The MCP server at `POST /mcp` (Streamable HTTP, stateless: one server and transport per
 * request, JSON answers). The route sits beside the HttpApi groups, so it applies the
 * transport's `Origin` rule (403 `forbidden` for another site's page, RequestSite.ts) and the
 * agent endpoints' authentication itself (401 without a valid agent key or OAuth access
 * token, 403 `ip_not_allowed` off the allowlist, 600 requests a minute); the edge has
 * already refused org keys (403) and other methods (405).
 *
 * Tools: the agent API (AgentTools.ts): the catalogue and the gateway call, recommend,
 * execute, jobs, receipts, disputes, approvals and the balance.
 */

const jsonResult = (value: unknown, isError = false): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(value) }],
  ...(isError ? { isError: true } : { structuredContent: value as Record<string, unknown> })
})

export const McpRouteLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const tools = yield* makeAgentTools
    const byName = new Map(tools.map((tool) => [tool.name, tool]))
    const listed = tools.map(({ annotations, description, inputSchema, name, title }) => ({
      name,
      title,
      description,
      inputSchema,
      annotations
    }))
    const authenticateAgent = yield* makeAgentRequestAuthentication
    const checkOrigin = yield* makeMcpOriginCheck
    const connections = yield* Connections
    const limiter = yield* RateLimiter
    const addresses = yield* ClientAddress
    const baseUrl = yield* PublicUrl
    const countingRefusals = yield* makeAgentRefusals

    /**
     * The agent a request acts as: by its agent key, or by an OAuth access token (any other
     * bearer that is not one of the service's own secrets), which acts as the agent its
     * owner connected. Either way the same agent, allowlist and rate limit.
     */
    const authenticate = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const token = bearerTokenOf(request)
      if (token === undefined || credentialKindOf(token) !== "unknown") {
        return yield* authenticateAgent(
          "The MCP server needs an agent key (sk_test_... or sk_live_...) or an OAuth access token"
        )
      }
      const agent = yield* connections.agentForAccessToken(token, yield* addresses.current)
      yield* enforceRateLimit(limiter, policies.agentEndpoints, `agent:${agent.id}`)
      return agent
    })

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

    const makeServer = (agent: AuthenticatedAgent, runtime: Runtime.Runtime<never>) => {
      const server = new Server({ name: "agent-gateway", version: "0.1.0" }, { capabilities: { tools: {} } })
      server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }))
      server.setRequestHandler(CallToolRequestSchema, async (request) => {
        const tool = byName.get(request.params.name)
        if (tool === undefined) {
          return toolResult(
            runtime,
            Effect.fail(new InvalidInput({ message: `Unknown tool ${request.params.name}` }))
          )
        }
        return toolResult(runtime, tool.run(agent, request.params.arguments))
      })
      return server
    }

    // The edge answers other methods (405, Allow: POST) and org keys (403) before this runs.
    const handler = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      yield* checkOrigin(request)
      const agent = yield* authenticate

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

    // A missing or unknown credential tells MCP clients where to read how to authenticate.
    // The route answers that itself, so it counts its refusals itself (the edge does for the rest).
    const challenged = countingRefusals(handler).pipe(
      Effect.catchTag("unauthenticated", (error) =>
        Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
          errorResponse(baseUrl, "unauthenticated", error.message).pipe(
            HttpServerResponse.setHeader(
              "www-authenticate",
              mcpChallenge(baseUrl, bearerTokenOf(request) === undefined ? undefined : error.message)
            )
          )))
    )
    yield* router.all("/mcp", challenged)
  })
)
