import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { AgentRefusal } from "../../Domain/AgentRefusal.js"

/**
 * The reads behind `GET /v1/orgs/{orgId}/usage`. Money comes from the ledger's holds, the
 * record every charge goes through: what a live hold captured less what was refunded since
 * (disputes, lower reported costs). A hold is dated by when it was made, so a call or an
 * item counts on the day it ran. The call and item rows only name what the money paid for
 * (the endpoint, the tool). Test-mode holds move no credits and are left out.
 */
export interface UsageRange {
  readonly orgId: string
  /** Inclusive start and exclusive end, UTC midnights. */
  readonly from: Date
  readonly until: Date
}

const Range = Schema.Struct({ orgId: Schema.String, from: Schema.DateFromSelf, until: Schema.DateFromSelf })

const AgentSpendRow = Schema.Struct({ agent_id: Schema.String, name: Schema.String, spend: Schema.BigInt })
const DaySpendRow = Schema.Struct({ day: Schema.String, spend: Schema.BigInt })
const LabelSpendRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  uses: Schema.Number,
  spend: Schema.BigInt
})

const TestActivityRow = Schema.Struct({
  purchases: Schema.Number,
  items: Schema.Number,
  calls: Schema.Number,
  priced: Schema.BigInt
})
const TrialWindowRow = Schema.Struct({
  funded: Schema.Boolean,
  trial_window_start: Schema.NullOr(Schema.DateFromSelf),
  trial_window_spent: Schema.BigInt
})
const AgentBudgetRow = Schema.Struct({ agent_id: Schema.String, budget: Schema.BigInt, spent: Schema.BigInt })

/** The most refusal rows one answer lists (newest first). */
export const REFUSAL_ROWS = 200

/** How many endpoints and tools the "top" lists name. */
export const TOP_COUNT = 10

export class UsageRepo extends Effect.Service<UsageRepo>()("Usage/UsageRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The org's live holds in the range that moved credits. */
    const spentHolds = (range: UsageRange) =>
      sql`
        SELECT id, agent_id, purpose, reference, created_at, captured - refunded AS spend
        FROM ledger_holds
        WHERE org_id = ${range.orgId} AND NOT test_mode AND captured > 0
          AND created_at >= ${range.from} AND created_at < ${range.until}`

    const byAgent = SqlSchema.findAll({
      Request: Range,
      Result: AgentSpendRow,
      execute: (range) =>
        sql`
        WITH spent AS (${spentHolds(range)})
        SELECT s.agent_id, a.name, sum(s.spend)::text AS spend
        FROM spent s JOIN agents a ON a.id = s.agent_id
        GROUP BY s.agent_id, a.name
        ORDER BY sum(s.spend) DESC, a.name`
    })

    /** Every day of the range, days without spend included. */
    const byDay = SqlSchema.findAll({
      Request: Range,
      Result: DaySpendRow,
      execute: (range) =>
        sql`
        WITH spent AS (${spentHolds(range)}),
        days AS (
          SELECT generate_series(${range.from}::timestamptz, ${range.until}::timestamptz - interval '1 day', interval '1 day') AS day
        )
        SELECT to_char(d.day AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, coalesce(sum(s.spend), 0)::text AS spend
        FROM days d LEFT JOIN spent s ON s.created_at >= d.day AND s.created_at < d.day + interval '1 day'
        GROUP BY d.day ORDER BY d.day`
    })

    const topEndpoints = SqlSchema.findAll({
      Request: Range,
      Result: LabelSpendRow,
      execute: (range) =>
        sql`
        WITH spent AS (${spentHolds(range)})
        SELECT c.endpoint_id AS id, c.endpoint_id AS name, count(*)::int AS uses, sum(s.spend)::text AS spend
        FROM spent s JOIN gateway_calls c ON c.id::text = s.reference
        WHERE s.purpose = 'gateway_call'
        GROUP BY c.endpoint_id
        ORDER BY sum(s.spend) DESC, c.endpoint_id
        LIMIT ${TOP_COUNT}`
    })

    const topTools = SqlSchema.findAll({
      Request: Range,
      Result: LabelSpendRow,
      execute: (range) =>
        sql`
        WITH spent AS (${spentHolds(range)})
        SELECT t.slug AS id, t.name, count(*)::int AS uses, sum(s.spend)::text AS spend
        FROM spent s
          JOIN receipt_items i ON i.id::text = s.reference
          JOIN tools t ON t.id = i.tool_id
        WHERE s.purpose = 'purchase_item'
        GROUP BY t.slug, t.name
        ORDER BY sum(s.spend) DESC, t.slug
        LIMIT ${TOP_COUNT}`
    })

    /** Test purchases and calls in the range: priced like live ones, no credits moved. */
    const testActivity = SqlSchema.single({
      Request: Range,
      Result: TestActivityRow,
      execute: (range) =>
        sql`
        SELECT
          (SELECT count(*)::int FROM receipts
           WHERE org_id = ${range.orgId} AND mode = 'test'
             AND created_at >= ${range.from} AND created_at < ${range.until}) AS purchases,
          count(*) FILTER (WHERE purpose = 'purchase_item')::int AS items,
          count(*) FILTER (WHERE purpose = 'gateway_call')::int AS calls,
          coalesce(sum(captured - refunded), 0)::text AS priced
        FROM ledger_holds
        WHERE org_id = ${range.orgId} AND test_mode AND captured > 0
          AND created_at >= ${range.from} AND created_at < ${range.until}`
    })

    /** Whether the org was ever funded, and its trial spend in the hour it last spent in. */
    const trialWindow = SqlSchema.findOne({
      Request: Schema.String,
      Result: TrialWindowRow,
      execute: (orgId) =>
        sql`SELECT funded, trial_window_start, trial_window_spent::text FROM org_balances WHERE org_id = ${orgId}`
    })

    const refusals = SqlSchema.findAll({
      Request: Range,
      Result: AgentRefusal,
      execute: (range) =>
        sql`
        SELECT r.org_id, r.agent_id, a.name, to_char(r.day, 'YYYY-MM-DD') AS day, r.code, r.count::int AS count,
          r.last_at, r.last_message
        FROM agent_refusals r JOIN agents a ON a.id = r.agent_id
        WHERE r.org_id = ${range.orgId} AND r.day >= ${range.from}::date AND r.day < ${range.until}::date
        ORDER BY r.last_at DESC, r.code
        LIMIT ${REFUSAL_ROWS}`
    })

    /**
     * Each agent's month against its budget, as the ledger counts it for the budget check
     * (spent and held, test agents included: their priced calls and items count against it).
     */
    const budgets = SqlSchema.findAll({
      Request: Schema.Struct({ orgId: Schema.String, month: Schema.String }),
      Result: AgentBudgetRow,
      execute: ({ month, orgId }) =>
        sql`
        SELECT a.id AS agent_id, a.monthly_budget_credits::text AS budget,
          coalesce(s.spent + s.held, 0)::text AS spent
        FROM agents a LEFT JOIN agent_month_spend s ON s.agent_id = a.id AND s.month = ${month}::date
        WHERE a.org_id = ${orgId}
        ORDER BY a.created_at DESC, a.id DESC`
    })

    return {
      budgets: (orgId: string, month: string) => Effect.orDie(budgets({ orgId, month })),
      testActivity: (range: UsageRange) => Effect.orDie(testActivity(range)),
      trialWindow: (orgId: string) => Effect.orDie(trialWindow(orgId)),
      refusals: (range: UsageRange) => Effect.orDie(refusals(range)),
      byAgent: (range: UsageRange) => Effect.orDie(byAgent(range)),
      byDay: (range: UsageRange) => Effect.orDie(byDay(range)),
      topEndpoints: (range: UsageRange) => Effect.orDie(topEndpoints(range)),
      topTools: (range: UsageRange) => Effect.orDie(topTools(range))
    } as const
  })
}) {}
