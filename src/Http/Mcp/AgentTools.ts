import { OpenApi } from "@effect/platform"
import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js"
import { Effect, ParseResult, Schema, Struct } from "effect"
import { CatalogueEndpointJson } from "../../Domain/Catalogue.js"
import type { AuthenticatedAgent } from "../../Domain/Current.js"
import { CallRequest } from "../../Domain/GatewayCall.js"
import { CallResult } from "../../Domain/GatewayCall.js"
import {
  Approval,
  Dispute,
  ExecuteRequest,
  ExecuteResult,
  Job,
  JobAccepted,
  Receipt,
  ReceiptList,
  RecommendRequest,
  RecommendResult
} from "../../Domain/Purchasing.js"
import { InvalidInput, NotFound } from "../../Errors/ApiErrors.js"
import { isApiError } from "../../Errors/Wire.js"
import { Approvals } from "../../Services/Approvals/Approvals.js"
import { Catalogue } from "../../Services/Catalogue/Catalogue.js"
import { AgentBalance } from "../../Services/Gateway/AgentBalance.js"
import { Gateway } from "../../Services/Gateway/Gateway.js"
import { PublicUrl } from "../../Services/PublicUrl.js"
import { Disputes } from "../../Services/Purchasing/Disputes.js"
import { Execute } from "../../Services/Purchasing/Execute.js"
import { JobRunner } from "../../Services/Purchasing/Jobs.js"
import { Receipts } from "../../Services/Purchasing/Receipts.js"
import { Recommend } from "../../Services/Purchasing/Recommend.js"
import { Balance } from "../Groups/GatewayGroup.js"
import { ApprovalIdParam, DisputeIdParam, isMissingRecord, JobIdParam, ReceiptIdParam } from "../Groups/PathIds.js"
import { EndpointSearch } from "../Groups/PublicGroup.js"
import { DisputeRequest } from "../Groups/PurchasingGroup.js"
import { DocumentedApi } from "../OpenApi/Document.js"
import { type ToolInputSchema, toolInputSchema } from "./ToolSchema.js"

/**
 * The agent API as MCP tools: the same services and answers as the agent endpoints (the
 * answer encoded by the endpoint's own schema), under the same key, allowlist and rate limit
 * (checked by the MCP route). A service error, and the answers that carry an error body
 * (`check_failed`, `approval_required`), come back as tool errors with that body.
 *
 * Each tool names its endpoint (`operation`): its title and description are the endpoint's
 * in the OpenAPI document, and a body's schema is the endpoint's payload schema, so a model
 * reads what a developer reads. Annotations say which tools only read and which spend.
 */
export interface AgentTool {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly inputSchema: ToolInputSchema
  readonly annotations: ToolAnnotations
  /** Decodes the arguments with `input`, runs, and answers the encoded result. */
  readonly run: (agent: AuthenticatedAgent, args: unknown) => Effect.Effect<unknown, unknown>
}

/** The catalogue search's query parameters, less `plan`: an agent's own plan prices it. */
export const SearchArguments = Schema.Struct(Struct.omit(EndpointSearch.fields, "plan"))

/** A record's id, decoded as its path id is (a value that is not a UUID names no record). */
const IdArguments = <A>(id: Schema.Schema<A, string>, what: string) =>
  Schema.Struct({ id: id.annotations({ description: `The ${what}'s id` }) })

const ReceiptListArguments = Schema.Struct({
  limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 200))).annotations({
    description: "At most this many receipts (1 to 200, default 50)"
  }),
  starting_after: Schema.optional(
    ReceiptIdParam.annotations({ description: "The last receipt id of the previous page" })
  )
})

/** Reads only: safe to call as often as a model likes. */
const reads: ToolAnnotations = { readOnlyHint: true, openWorldHint: false }
/** Spends the org's credits (or, with a test key, prices without spending) on outside providers. */
const spends: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true
}

/** Writes a record of the org's (a dispute) without spending. */
const writes: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false
}

/** Summary and description of every operation, from the finished OpenAPI document. */
const operations = (() => {
  const byId = new Map<string, { summary: string; description: string }>()
  // The endpoints' own summaries and descriptions (their `OpenApi.annotations` in Groups/).
  for (const path of Object.values<any>(OpenApi.fromApi(DocumentedApi).paths)) {
    for (const operation of Object.values<any>(path)) {
      byId.set(operation.operationId, { summary: operation.summary, description: operation.description })
    }
  }
  return byId
})()

const inputSchemaOf = (schema: Schema.Schema.Any & { readonly fields: Schema.Struct.Fields }): ToolInputSchema =>
  // An empty struct's JSON Schema is "any object or array"; a tool without arguments takes {}.
  Object.keys(schema.fields).length === 0
    ? { type: "object", additionalProperties: false }
    : toolInputSchema(schema)

const tool = <Args, A, I, E>(definition: {
  readonly name: string
  /** The endpoint's operation id (`group.endpoint`): the tool's title and description. */
  readonly operation: string
  readonly annotations: ToolAnnotations
  readonly input: Schema.Schema<Args, any, never> & { readonly fields: Schema.Struct.Fields }
  readonly output: Schema.Schema<A, I, never>
  readonly run: (agent: AuthenticatedAgent, args: Args) => Effect.Effect<A, E>
}): AgentTool => {
  const operation = operations.get(definition.operation)
  if (operation === undefined) throw new Error(`No operation ${definition.operation} for the tool ${definition.name}`)
  return {
    name: definition.name,
    title: operation.summary,
    description: operation.description,
    annotations: { title: operation.summary, ...definition.annotations },
    inputSchema: inputSchemaOf(definition.input),
    run: (agent, args) =>
      Schema.decodeUnknown(definition.input)(args ?? {}).pipe(
        Effect.mapError((error) => {
          const first = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
          return first !== undefined && isMissingRecord(first.message)
            ? new NotFound({ message: first.message })
            : new InvalidInput({ message: `Invalid arguments: ${error.message}` })
        }),
        Effect.flatMap((decoded: Args) => definition.run(agent, decoded)),
        Effect.flatMap((value) => Schema.encode(definition.output)(value).pipe(Effect.orDie))
      )
  }
}

export const makeAgentTools = Effect.gen(function*() {
  const catalogue = yield* Catalogue
  const gateway = yield* Gateway
  const recommend = yield* Recommend
  const execute = yield* Execute
  const jobs = yield* JobRunner
  const receipts = yield* Receipts
  const disputes = yield* Disputes
  const approvals = yield* Approvals
  const balance = yield* AgentBalance
  const baseUrl = yield* PublicUrl

  const tools: ReadonlyArray<AgentTool> = [
    tool({
      name: "search_endpoints",
      operation: "public.endpoints",
      annotations: reads,
      input: SearchArguments,
      output: Schema.Struct({ endpoints: Schema.Array(CatalogueEndpointJson) }),
      run: (agent, args) => Effect.map(catalogue.search(args, agent.org_plan), (endpoints) => ({ endpoints }))
    }),
    tool({
      name: "call_endpoint",
      operation: "gateway.call",
      annotations: spends,
      input: CallRequest,
      output: CallResult,
      run: (agent, args) => gateway.call(agent, args)
    }),
    tool({
      name: "recommend",
      operation: "purchasing.recommend",
      annotations: reads,
      input: RecommendRequest,
      output: RecommendResult,
      run: (agent, args) => recommend.recommend(agent, args)
    }),
    tool({
      name: "execute",
      operation: "purchasing.execute",
      annotations: spends,
      input: ExecuteRequest,
      output: Schema.Union(ExecuteResult, JobAccepted),
      run: (agent, args) =>
        Effect.flatMap(execute.execute(agent, args, baseUrl), (answer) =>
          // check_failed and approval_required carry an error body: tool errors with that body.
          isApiError(answer) ? Effect.fail(answer) : Effect.succeed(answer))
    }),
    tool({
      name: "get_job",
      operation: "purchasing.job",
      annotations: reads,
      input: IdArguments(JobIdParam, "job"),
      output: Schema.Struct({ job: Job }),
      run: (agent, args) => Effect.map(jobs.get(agent.org_id, args.id), (job) => ({ job }))
    }),
    tool({
      name: "list_receipts",
      operation: "purchasing.receipts",
      annotations: reads,
      input: ReceiptListArguments,
      output: ReceiptList,
      run: (agent, args) => receipts.list(agent.org_id, { limit: args.limit ?? 50, startingAfter: args.starting_after })
    }),
    tool({
      name: "get_receipt",
      operation: "purchasing.receipt",
      annotations: reads,
      input: IdArguments(ReceiptIdParam, "receipt"),
      output: Schema.Struct({ receipt: Receipt }),
      run: (agent, args) => Effect.map(receipts.get(agent.org_id, args.id), (receipt) => ({ receipt }))
    }),
    tool({
      name: "open_dispute",
      operation: "purchasing.openDispute",
      annotations: writes,
      input: DisputeRequest,
      output: Schema.Struct({ dispute: Dispute }),
      run: (agent, args) => Effect.map(disputes.open(agent, args), (dispute) => ({ dispute }))
    }),
    tool({
      name: "get_dispute",
      operation: "purchasing.dispute",
      annotations: reads,
      input: IdArguments(DisputeIdParam, "dispute"),
      output: Schema.Struct({ dispute: Dispute }),
      run: (agent, args) => Effect.map(disputes.get(agent.org_id, args.id), (dispute) => ({ dispute }))
    }),
    tool({
      name: "get_approval",
      operation: "purchasing.approval",
      annotations: reads,
      input: IdArguments(ApprovalIdParam, "approval"),
      output: Schema.Struct({ approval: Approval }),
      run: (agent, args) => Effect.map(approvals.get(agent.org_id, args.id), (approval) => ({ approval }))
    }),
    tool({
      name: "get_balance",
      operation: "gateway.balance",
      annotations: reads,
      input: Schema.Struct({}),
      output: Balance,
      run: (agent) => balance.of(agent)
    })
  ]
  return tools
})
