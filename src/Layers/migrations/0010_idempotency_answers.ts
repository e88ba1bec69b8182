import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A purchase's idempotency key keeps its answer as a typed value (the JSON of
 * `PurchaseAnswer`), no longer as an HTTP status and wire body: the HTTP layer alone makes
 * wire answers. Answers kept before are converted: a result or a job is the same JSON; an
 * error body `{error:{code,message,...}, ...extra}` becomes `{_tag: code, message, ...extra}`.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE idempotency_keys ADD COLUMN answer text`
  yield* sql`
    UPDATE idempotency_keys SET answer = CASE
      WHEN response_body::jsonb ? 'error' THEN (
        jsonb_build_object(
          '_tag', response_body::jsonb -> 'error' ->> 'code',
          'message', response_body::jsonb -> 'error' ->> 'message'
        ) || (response_body::jsonb - 'error')
      )::text
      ELSE response_body
    END
    WHERE response_body IS NOT NULL`
  yield* sql`ALTER TABLE idempotency_keys DROP COLUMN response_status, DROP COLUMN response_body`
})
