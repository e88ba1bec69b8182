#!/usr/bin/env node
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError
} from "@modelcontextprotocol/sdk/types.js"
import { Cause, Data, Effect, Exit } from "effect"
import { resolveOptions } from "./client.js"
import { clientError, ServiceError } from "./errors.js"
import { retryPolicy, retrySchedule } from "./retry.js"

/**
 * The MCP stdio bridge: a local MCP client (Claude Desktop, Cursor, an IDE agent) starts this
 * command; it speaks MCP over stdin/stdout and forwards every request to the service's
 * `POST /mcp` (Streamable HTTP) with `SERVICE_API_KEY`, at `SERVICE_API_URL`. When the service
 * cannot be reached, the call is retried by the client rules and then answered with the
 * error `connection_failed`.
 */
const { apiKey, baseUrl } = resolveOptions({})
const retries = retrySchedule(retryPolicy())

let remote: Client | null = null

const connectRemote = async () => {
  if (remote !== null) return remote
  const client = new Client({ name: "agent-gateway-bridge", version: "0.1.0" })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${apiKey}` } }
    })
  )
  remote = client
  return client
}

/** A failure to reach the service at all (as opposed to an answer from it). */
const unreachable = (error: unknown) =>
  clientError("connection_failed", `The service at ${baseUrl} cannot be reached: ${String(error)}`)

/** What a request through the MCP client threw, kept for sorting below. */
class ForwardFailure extends Data.TaggedError("ForwardFailure")<{ readonly cause: unknown }> {}

const isTransportFailure = (error: unknown) => !(error instanceof McpError) || error.code === ErrorCode.ConnectionClosed

/** Runs `use` against the service, reconnecting and retrying while it cannot be reached. */
const forward = async <A>(use: (client: Client) => Promise<A>): Promise<A> => {
  const once = Effect.tryPromise({
    try: async () => use(await connectRemote()),
    catch: (cause) => new ForwardFailure({ cause })
  }).pipe(
    Effect.catchAll(({ cause }) => {
      if (!isTransportFailure(cause)) return Effect.die(cause)
      remote = null
      return Effect.fail(unreachable(cause))
    })
  )
  const exit = await Effect.runPromiseExit(Effect.retry(once, retries))
  if (Exit.isSuccess(exit)) return exit.value
  throw Cause.squash(exit.cause)
}

const errorResult = (error: ServiceError): CallToolResult => ({
  isError: true,
  content: [{
    type: "text",
    text: JSON.stringify({ error: { code: error.code, message: error.message, retryable: error.retryable } })
  }]
})

const server = new Server({ name: "agent-gateway", version: "0.1.0" }, { capabilities: { tools: {} } })

server.setRequestHandler(ListToolsRequestSchema, async () => {
  try {
    return await forward((client) => client.listTools())
  } catch (error) {
    if (error instanceof ServiceError) {
      throw new McpError(ErrorCode.InternalError, `${error.code}: ${error.message}`, { code: error.code })
    }
    throw error
  }
})

server.setRequestHandler(CallToolRequestSchema, async (request) => {
  try {
    return (await forward((client) =>
      client.callTool({ name: request.params.name, arguments: request.params.arguments ?? {} })
    )) as CallToolResult
  } catch (error) {
    if (error instanceof ServiceError) return errorResult(error)
    throw error
  }
})

await server.connect(new StdioServerTransport())
