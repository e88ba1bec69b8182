import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * People, orgs and the credentials that reach them. Secrets are never stored: only the
 * SHA-256 hex of a key or token, and the short prefix shown to people.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE users (
      id uuid PRIMARY KEY,
      email text NOT NULL,
      name text,
      email_verified boolean NOT NULL DEFAULT false,
      phone text,
      phone_verified boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE UNIQUE INDEX users_email ON users (lower(email))`
  yield* sql`CREATE UNIQUE INDEX users_verified_phone ON users (phone) WHERE phone_verified`
  yield* sql`
    CREATE TABLE orgs (
      id uuid PRIMARY KEY,
      name text NOT NULL,
      plan text NOT NULL DEFAULT 'payg' CHECK (plan IN ('payg', 'pro', 'max')),
      low_balance_credits bigint NOT NULL DEFAULT 5000 CHECK (low_balance_credits >= 0),
      created_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE org_members (
      org_id uuid NOT NULL REFERENCES orgs (id),
      user_id uuid NOT NULL REFERENCES users (id),
      role text NOT NULL CHECK (role IN ('owner', 'member')),
      created_at timestamptz NOT NULL,
      PRIMARY KEY (org_id, user_id)
    )`
  yield* sql`CREATE INDEX org_members_user ON org_members (user_id)`
  yield* sql`
    CREATE TABLE sessions (
      id uuid PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users (id),
      token_hash text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz,
      ip text,
      user_agent text
    )`
  yield* sql`CREATE INDEX sessions_user ON sessions (user_id)`
  yield* sql`
    CREATE TABLE agents (
      id uuid PRIMARY KEY,
      org_id uuid NOT NULL REFERENCES orgs (id),
      name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 80),
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      status text NOT NULL CHECK (status IN ('active', 'disabled')),
      monthly_budget_credits bigint NOT NULL CHECK (monthly_budget_credits >= 0),
      approval_threshold_credits bigint CHECK (approval_threshold_credits >= 0),
      ip_allowlist jsonb NOT NULL DEFAULT '[]',
      key_hash text UNIQUE,
      key_prefix text,
      key_issued_at timestamptz,
      key_last_used_at timestamptz,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX agents_org ON agents (org_id)`
  yield* sql`
    CREATE TABLE agent_key_addresses (
      agent_id uuid NOT NULL REFERENCES agents (id),
      address text NOT NULL,
      first_seen_at timestamptz NOT NULL,
      last_seen_at timestamptz NOT NULL,
      PRIMARY KEY (agent_id, address)
    )`
  yield* sql`
    CREATE TABLE org_keys (
      id uuid PRIMARY KEY,
      org_id uuid NOT NULL REFERENCES orgs (id),
      name text NOT NULL,
      scope text NOT NULL CHECK (scope IN ('read', 'write')),
      prefix text NOT NULL,
      key_hash text NOT NULL UNIQUE,
      created_by uuid NOT NULL REFERENCES users (id),
      created_by_email text NOT NULL,
      created_at timestamptz NOT NULL,
      last_used_at timestamptz,
      revoked_at timestamptz
    )`
  yield* sql`CREATE INDEX org_keys_org ON org_keys (org_id)`

  // Sign-in flows. Every token is stored as its SHA-256 hex only.
  yield* sql`
    CREATE TABLE sign_in_tokens (
      id uuid PRIMARY KEY,
      email text NOT NULL,
      token_hash text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      ip text
    )`
  yield* sql`
    CREATE TABLE phone_codes (
      user_id uuid PRIMARY KEY REFERENCES users (id),
      phone text NOT NULL,
      code_hash text NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE org_invites (
      id uuid PRIMARY KEY,
      org_id uuid NOT NULL REFERENCES orgs (id),
      email text NOT NULL,
      role text NOT NULL CHECK (role IN ('owner', 'member')),
      token_hash text NOT NULL UNIQUE,
      invited_by uuid NOT NULL REFERENCES users (id),
      invited_by_email text NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      accepted_at timestamptz,
      accepted_by uuid REFERENCES users (id),
      revoked_at timestamptz
    )`
  yield* sql`CREATE INDEX org_invites_org ON org_invites (org_id, lower(email))`
  yield* sql`
    CREATE TABLE deletion_requests (
      id uuid PRIMARY KEY,
      org_id uuid NOT NULL REFERENCES orgs (id),
      requested_by uuid NOT NULL REFERENCES users (id),
      requested_by_email text NOT NULL,
      reason text,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'completed', 'cancelled')),
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX deletion_requests_org ON deletion_requests (org_id, created_at)`
  /** One row per identity-provider sign-in in flight; the browser holds the handle in a cookie. */
  yield* sql`
    CREATE TABLE idp_sign_ins (
      id uuid PRIMARY KEY,
      handle_hash text NOT NULL UNIQUE,
      state text NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      used_at timestamptz
    )`

  // Administrators: scrypt password hashes; the TOTP secret is sealed with a key derived
  // from the password, so nothing in these rows signs anyone in by itself.
  yield* sql`
    CREATE TABLE admins (
      id uuid PRIMARY KEY,
      email text NOT NULL,
      password_hash text NOT NULL,
      totp_sealed text NOT NULL,
      totp_last_counter bigint,
      failed_attempts integer NOT NULL DEFAULT 0,
      locked_until timestamptz,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE UNIQUE INDEX admins_email ON admins (lower(email))`
  yield* sql`
    CREATE TABLE admin_sessions (
      id uuid PRIMARY KEY,
      admin_id uuid NOT NULL REFERENCES admins (id),
      token_hash text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz,
      ip text,
      user_agent text
    )`
})
