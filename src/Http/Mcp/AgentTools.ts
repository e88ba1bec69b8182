import { Effect, JSONSchema, Schema } from "effect"
import { Availability, CatalogueEndpoint, Category } from "../../Domain/Catalogue.js"
import { CallRequest } from "../../Domain/GatewayCall.js"
import {
  Approval,
  Dispute,
  DisputeRequest,
  ExecuteRequest,
  ExecuteResult,
  Job,
  JobAccepted,
  Receipt,
  ReceiptList,
  RecommendRequest,
  RecommendResult
} from "../../Domain/Purchasing.js"
import { InvalidInput } from "../../Errors/ApiErrors.js"
import { isApiError } from "../../Errors/Wire.js"
import { Approvals } from "../../Services/Approvals/Approvals.js"
import type { AuthenticatedAgent } from "../../Services/Auth/Current.js"
import { Catalogue } from "../../Services/Catalogue/Catalogue.js"
import { AgentBalance } from "../../Services/Gateway/AgentBalance.js"
import { Gateway } from "../../Services/Gateway/Gateway.js"
import { PublicUrl } from "../../Services/PublicUrl.js"
import { Disputes } from "../../Services/Purchasing/Disputes.js"
import { Execute } from "../../Services/Purchasing/Execute.js"
import { JobRunner } from "../../Services/Purchasing/Jobs.js"
import { Receipts } from "../../Services/Purchasing/Receipts.js"
import { Recommend } from "../../Services/Purchasing/Recommend.js"
import { Balance, CallResult } from "../Groups/GatewayGroup.js"

/**
 * The agent API as MCP tools: the same services and answers as the agent endpoints (the
 * answer encoded by the endpoint's own schema), under the same key, allowlist and rate limit
 * (checked by the MCP route). A service error, and the answers that carry an error body
 * (`check_failed`, `approval_required`), come back as tool errors with that body.
 */
export interface AgentTool {
  readonly name: string
  readonly description: string
  readonly inputSchema: { type: "object"; properties?: Record<string, object>; required?: Array<string> }
  /** Decodes the arguments with `input`, runs, and answers the encoded result. */
  readonly run: (agent: AuthenticatedAgent, args: unknown) => Effect.Effect<unknown, unknown>
  readonly input: Schema.Schema.Any
}

export const SearchArguments = Schema.Struct({
  q: Schema.optional(Schema.String.annotations({ description: "Words that must all match the id, provider or name" })),
  category: Schema.optional(Category),
  provider: Schema.optional(Schema.String.annotations({ description: "Provider id" })),
  availability: Schema.optional(Availability)
})

const IdArguments = (what: string) =>
  Schema.Struct({ id: Schema.String.annotations({ description: `The ${what}'s id` }) })

const ReceiptListArguments = Schema.Struct({
  limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 200))).annotations({
    description: "At most this many receipts (1 to 200, default 50)"
  }),
  starting_after: Schema.optional(
    Schema.String.annotations({ description: "The last receipt id of the previous page" })
  )
})

/**
 * A tool's input as JSON Schema. The struct is rebuilt from its fields so that a named schema
 * (`identifier`) is inlined: MCP wants `type: "object"` at the top, not a `$ref`.
 */
const inputSchemaOf = (schema: { readonly fields: Schema.Struct.Fields }) => {
  // An empty struct's JSON Schema is "any object or array"; a tool without arguments takes {}.
  if (Object.keys(schema.fields).length === 0) return { type: "object", properties: {} } as AgentTool["inputSchema"]
  const { $schema: _ignored, ...rest } = JSONSchema.make(Schema.Struct(schema.fields)) as unknown as Record<
    string,
    unknown
  >
  return rest as AgentTool["inputSchema"]
}

const tool = <Args, A, I, E>(definition: {
  readonly name: string
  readonly description: string
  readonly input: Schema.Schema<Args, any, never> & { readonly fields: Schema.Struct.Fields }
  readonly output: Schema.Schema<A, I, never>
  readonly run: (agent: AuthenticatedAgent, args: Args) => Effect.Effect<A, E>
}): AgentTool => ({
  name: definition.name,
  description: definition.description,
  input: definition.input,
  inputSchema: inputSchemaOf(definition.input),
  run: (agent, args) =>
    Schema.decodeUnknown(definition.input)(args ?? {}).pipe(
      Effect.mapError((error) => new InvalidInput({ message: `Invalid arguments: ${error.message}` })),
      Effect.flatMap((decoded: Args) => definition.run(agent, decoded)),
      Effect.flatMap((value) => Schema.encode(definition.output)(value).pipe(Effect.orDie))
    )
})

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
      description: "Search the gateway catalogue of provider endpoints. Every word of `q` must match the id, " +
        "provider or name. Answers endpoint records with method, path, path_params and price_per_call (credits).",
      input: SearchArguments,
      output: Schema.Struct({ endpoints: Schema.Array(CatalogueEndpoint) }),
      run: (agent, args) => Effect.map(catalogue.search(args, agent.org_plan), (endpoints) => ({ endpoints }))
    }),
    tool({
      name: "call_endpoint",
      description: "Call a live catalogue endpoint with the provider's own parameters. The price is held and " +
        "charged only when the provider answers; failures, refusals and timeouts are refunded.",
      input: CallRequest,
      output: CallResult,
      run: (agent, args) => gateway.call(agent, args)
    }),
    tool({
      name: "recommend",
      description: "Rank the tools for a data task by measured quality and price before buying. Give `task_type` " +
        "(email_find, email_verify, company_enrich, person_enrich, web_extract, phone_find, domain_search) or " +
        "describe the task in free text as `task`. Each tool says whether it can be bought (`purchasable`).",
      input: RecommendRequest,
      output: RecommendResult,
      run: (agent, args) => recommend.recommend(agent, args)
    }),
    tool({
      name: "execute",
      description: "Buy verified results from a tool (its id or slug from `recommend`): one object of the tool's " +
        "input fields per item in `inputs` (1 to 1,000). A result is charged only when it passes the tool's " +
        "published check. Up to 25 inputs answer at once; more answer a job (`status: queued`, follow it with " +
        "`get_job`). Set `max_price` (credits) to cap the cost and `idempotency_key` to retry safely. An " +
        "`approval_required` error means an owner must approve: retry with its `approval_id` once approved.",
      input: ExecuteRequest,
      output: Schema.Union(ExecuteResult, JobAccepted),
      run: (agent, args) =>
        Effect.flatMap(execute.execute(agent, args, baseUrl), (answer) =>
          // check_failed and approval_required carry an error body: tool errors with that body.
          isApiError(answer) ? Effect.fail(answer) : Effect.succeed(answer))
    }),
    tool({
      name: "get_job",
      description: "A purchase job's status, progress (done of total) and every item's outcome with its result.",
      input: IdArguments("job"),
      output: Schema.Struct({ job: Job }),
      run: (agent, args) => Effect.map(jobs.get(agent.org_id, args.id), (job) => ({ job }))
    }),
    tool({
      name: "list_receipts",
      description: "The org's purchase receipts, newest first, with what each charged. Page with `starting_after`.",
      input: ReceiptListArguments,
      output: ReceiptList,
      run: (agent, args) => receipts.list(agent.org_id, { limit: args.limit ?? 50, startingAfter: args.starting_after })
    }),
    tool({
      name: "get_receipt",
      description: "One receipt: every item's outcome, charge, refund, check and result hash.",
      input: IdArguments("receipt"),
      output: Schema.Struct({ receipt: Receipt }),
      run: (agent, args) => Effect.map(receipts.get(agent.org_id, args.id), (receipt) => ({ receipt }))
    }),
    tool({
      name: "open_dispute",
      description: "Dispute a charged item (passed or partial) of a receipt within 7 days: give the receipt id, " +
        "the item's index and why. An administrator decides; an upheld dispute refunds the item.",
      input: DisputeRequest,
      output: Schema.Struct({ dispute: Dispute }),
      run: (agent, args) => Effect.map(disputes.open(agent, args), (dispute) => ({ dispute }))
    }),
    tool({
      name: "get_dispute",
      description:
        "A dispute's status (open, upheld, rejected), the administrator's decision and note, and the refund.",
      input: IdArguments("dispute"),
      output: Schema.Struct({ dispute: Dispute }),
      run: (agent, args) => Effect.map(disputes.get(agent.org_id, args.id), (dispute) => ({ dispute }))
    }),
    tool({
      name: "get_approval",
      description: "An approval's status (waiting, approved, rejected, expired), the tool and amount it is locked " +
        "to, and when it expires. Retry the purchase with its id once it is approved.",
      input: IdArguments("approval"),
      output: Schema.Struct({ approval: Approval }),
      run: (agent, args) => Effect.map(approvals.get(agent.org_id, args.id), (approval) => ({ approval }))
    }),
    tool({
      name: "get_balance",
      description: "This agent's month-to-date spend and monthly budget, and the org's credits and trial.",
      input: Schema.Struct({}),
      output: Balance,
      run: (agent) => balance.of(agent)
    })
  ]
  return tools
})
