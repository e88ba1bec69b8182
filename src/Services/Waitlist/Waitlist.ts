import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import { randomUUID } from "node:crypto"

/** The waitlist: one row per address, whatever its case; joining again changes nothing. */
export class Waitlist extends Effect.Service<Waitlist>()("Waitlist/Waitlist", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const join = (email: string) =>
      Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        const inserted = yield* sql`
          INSERT INTO waitlist (id, email, created_at) VALUES (${randomUUID()}, ${email}, ${now})
          ON CONFLICT ((lower(email))) DO NOTHING
          RETURNING id`
        return { joined: inserted.length > 0 }
      }).pipe(Effect.orDie)

    return { join } as const
  })
}) {}
