import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import type { OrgActor } from "../../Domain/Current.js"
import { OrgKeyId } from "../../Domain/Ids.js"
import { commonLimits } from "../../Domain/Plans.js"
import { newSecret, secretPrefixes } from "../../Domain/Secrets.js"
import { currentDate } from "../../Domain/Timestamps.js"
import { NotFound, PlanLimit } from "../../Errors/ApiErrors.js"
import { requireOwner } from "../Auth/Roles.js"
import { sha256Hex } from "../SecretBox/Hashes.js"
import { OrgKeysRepo } from "./OrgKeysRepo.js"

export const ORG_KEY_PREFIX_LENGTH = 10

export const orgKeyNote =
  "This secret is shown only now: store it somewhere safe. The service keeps only its SHA-256 hash. " +
  "The key acts as you, with your current role, and stops working if you leave the org."

/** Org keys: made and revoked by a signed-in owner (the HTTP layer refuses org keys here). */
export class OrgKeys extends Effect.Service<OrgKeys>()("OrgKeys/OrgKeys", {
  dependencies: [OrgKeysRepo.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* OrgKeysRepo

    const create = (actor: OrgActor, name: string, scope: "read" | "write") =>
      Effect.gen(function*() {
        yield* requireOwner(actor)
        const secret = newSecret(secretPrefixes.orgKey)
        const row = yield* Effect.gen(function*() {
          yield* sql`SELECT id FROM orgs WHERE id = ${actor.org_id} FOR UPDATE`
          if ((yield* repo.countActive(actor.org_id)) >= commonLimits.org_keys_per_org) {
            return yield* new PlanLimit({
              message: `An org may have at most ${commonLimits.org_keys_per_org} org keys; revoke one first`
            })
          }
          return yield* repo.insert({
            id: OrgKeyId.make(randomUUID()),
            org_id: actor.org_id,
            name,
            scope,
            prefix: secret.slice(0, ORG_KEY_PREFIX_LENGTH),
            key_hash: sha256Hex(secret),
            created_by: actor.user_id,
            created_by_email: actor.email,
            created_at: yield* currentDate
          })
        }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))
        return { key: row, secret, note: orgKeyNote }
      })

    const list = (actor: OrgActor) => repo.listActive(actor.org_id)

    /** Revokes a key at once; an unknown or already revoked key is 404. */
    const revoke = (actor: OrgActor, keyId: OrgKeyId) =>
      Effect.gen(function*() {
        yield* requireOwner(actor)
        const revoked = yield* repo.revoke(actor.org_id, keyId, yield* currentDate)
        if (!revoked) return yield* new NotFound({ message: "No such active org key" })
        return { status: "revoked" as const }
      })

    return { create, list, revoke } as const
  })
}) {}
