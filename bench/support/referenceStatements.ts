import { randomUUID } from "node:crypto"

/**
 * What the benchmarks' two reference gateways share (referenceGateway.ts in plain Node,
 * minimalEffectGateway.ts on the service's stack): their settings, the provider's address,
 * and the three statements (the agent key, one conditional hold, one settlement, on the
 * service's own schema; sent as named, prepared, statements).
 * Settings: PROVIDERS_UPSTREAM, REFERENCE_ENDPOINT (id), REFERENCE_PRICE (credits).
 */
const upstream = process.env["PROVIDERS_UPSTREAM"]!
export const endpointId = process.env["REFERENCE_ENDPOINT"] ?? "benchprov/person"
export const price = process.env["REFERENCE_PRICE"] ?? "10"
const [providerId, ...rest] = endpointId.split("/")

/** The provider's address for the endpoint, with the call's query. */
export const providerUrl = (query: Readonly<Record<string, string>> | undefined) => {
  const search = new URLSearchParams(query ?? {}).toString()
  return `${upstream}/${providerId}/v1/${rest.join("/")}${search === "" ? "" : `?${search}`}`
}

/** The hold statement's parameters: hold id, agent id, month, price, org id, entry id, reference. */
export const holdParams = (holdId: string, agent: { readonly id: string; readonly org_id: string }) => [
  holdId,
  agent.id,
  new Date().toISOString().slice(0, 8) + "01",
  price,
  agent.org_id,
  randomUUID(),
  holdId
]

export const keyLookup = {
  name: "ref_key",
  text: `SELECT id, org_id FROM agents WHERE key_hash = $1 AND status = 'active' AND mode = 'live'`
}

export const hold = {
  name: "ref_hold",
  text: `
    WITH s AS (
      INSERT INTO agent_month_spend AS s (agent_id, month, org_id, spent, held)
      SELECT a.id, $3::date, a.org_id, 0, $4::bigint FROM agents a
      WHERE a.id = $2 AND $4::bigint <= a.monthly_budget_credits
      ON CONFLICT (agent_id, month) DO UPDATE SET held = s.held + excluded.held
      WHERE s.spent + s.held + excluded.held <= (SELECT monthly_budget_credits FROM agents WHERE id = excluded.agent_id)
      RETURNING 1
    ),
    d AS (
      UPDATE org_balances SET balance = balance - $4::bigint, updated_at = now()
      WHERE org_id = $5 AND NOT frozen AND balance >= $4::bigint AND EXISTS (SELECT 1 FROM s)
      RETURNING 1
    ),
    h AS (
      INSERT INTO ledger_holds (id, org_id, agent_id, amount, purpose, reference, test_mode, month, status,
                                created_at, expires_at)
      SELECT $1, $5, $2, $4::bigint, 'gateway', $7, false, $3::date, 'held', now(), now() + interval '2 minutes'
      FROM d
      RETURNING id
    )
    INSERT INTO ledger_entries (id, org_id, kind, amount, credits, hold_id, agent_id, note, created_at)
    SELECT $6, $5, 'hold', -$4::bigint, $4::bigint, h.id, $2, 'gateway', now() FROM h
    RETURNING 1`
}

/** Settlement parameters: hold id, entry id. */
export const settle = {
  name: "ref_settle",
  text: `
    WITH h AS (
      UPDATE ledger_holds SET status = 'captured', captured = amount, settled_at = now()
      WHERE id = $1 AND status = 'held'
      RETURNING id, org_id, agent_id, amount, month
    ),
    s AS (
      UPDATE agent_month_spend m SET held = m.held - h.amount, spent = m.spent + h.amount
      FROM h WHERE m.agent_id = h.agent_id AND m.month = h.month
      RETURNING 1
    )
    INSERT INTO ledger_entries (id, org_id, kind, amount, credits, hold_id, agent_id, note, created_at)
    SELECT $2, h.org_id, 'capture', 0, h.amount, h.id, h.agent_id, 'gateway', now() FROM h, s
    RETURNING 1`
}
