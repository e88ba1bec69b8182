import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Public data: the gateway catalogue, the tools with their benchmarks, the waitlist. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE providers (
      id text PRIMARY KEY,
      name text NOT NULL,
      base_url text NOT NULL,
      auth jsonb NOT NULL,
      cost_report jsonb,
      daily_call_cap integer NOT NULL CHECK (daily_call_cap > 0),
      docs_url text NOT NULL
    )`
  yield* sql`
    CREATE TABLE catalogue_endpoints (
      id text PRIMARY KEY,
      provider_id text NOT NULL REFERENCES providers (id),
      name text NOT NULL,
      category text NOT NULL,
      method text NOT NULL CHECK (method IN ('GET', 'POST', 'PATCH', 'DELETE')),
      path text NOT NULL,
      path_params jsonb NOT NULL,
      base_price_credits bigint NOT NULL CHECK (base_price_credits > 0),
      availability text NOT NULL CHECK (availability IN ('live', 'on request')),
      people_lookup_field text,
      base_url text,
      search_text text NOT NULL
    )`
  yield* sql`CREATE INDEX catalogue_endpoints_provider ON catalogue_endpoints (provider_id)`
  yield* sql`CREATE INDEX catalogue_endpoints_category ON catalogue_endpoints (category)`
  yield* sql`
    CREATE TABLE tools (
      id uuid PRIMARY KEY,
      slug text NOT NULL UNIQUE,
      name text NOT NULL,
      provider text NOT NULL,
      provider_name text NOT NULL,
      task_type text NOT NULL,
      description text NOT NULL,
      price_per_success_credits bigint CHECK (price_per_success_credits > 0),
      status text NOT NULL CHECK (status IN ('live', 'paused', 'information_only')),
      resale_rights boolean NOT NULL,
      gateway_endpoint text NOT NULL,
      input jsonb NOT NULL,
      check_id text NOT NULL,
      check_version text NOT NULL,
      check_verifies text NOT NULL
    )`
  yield* sql`CREATE INDEX tools_task_type ON tools (task_type)`
  yield* sql`
    CREATE TABLE tool_benchmarks (
      tool_id uuid NOT NULL REFERENCES tools (id),
      date date NOT NULL,
      sample_size integer NOT NULL,
      accuracy numeric(4, 3) NOT NULL,
      coverage numeric(4, 3) NOT NULL,
      latency_p50_ms integer NOT NULL,
      latency_p95_ms integer NOT NULL,
      PRIMARY KEY (tool_id, date)
    )`
  yield* sql`
    CREATE TABLE waitlist (
      id uuid PRIMARY KEY,
      email text NOT NULL,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE UNIQUE INDEX waitlist_email ON waitlist (lower(email))`
})
