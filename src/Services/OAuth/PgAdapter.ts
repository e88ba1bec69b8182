import { Clock, Effect, Runtime } from "effect"
import type { Adapter, AdapterPayload } from "oidc-provider"
import { currentDate } from "../../Domain/Timestamps.js"
import { OAuthRecordsRepo } from "./OAuthRecordsRepo.js"

/**
 * The authorization server's storage (oidc-provider's adapter interface) on PostgreSQL,
 * shared by every replica: one adapter instance per model, each call run on the service's
 * runtime (its SQL client and clock).
 */
export const makePgAdapter = Effect.gen(function*() {
  const repo = yield* OAuthRecordsRepo
  const runtime = yield* Effect.runtime<never>()
  const run = Runtime.runPromise(runtime)

  return class PgAdapter implements Adapter {
    constructor(readonly model: string) {}

    upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      return run(Effect.flatMap(currentDate, (at) =>
        repo.upsert({
          model: this.model,
          id,
          payload,
          grant_id: payload.grantId ?? null,
          uid: payload.uid ?? null,
          user_code: payload.userCode ?? null,
          expires_at: expiresIn === undefined ? null : new Date(at.getTime() + expiresIn * 1000)
        })))
    }

    find(id: string): Promise<AdapterPayload | undefined> {
      return run(Effect.flatMap(currentDate, (at) => repo.find(this.model, id, at))) as Promise<
        AdapterPayload | undefined
      >
    }

    findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return run(Effect.flatMap(currentDate, (at) => repo.findByUid(this.model, uid, at))) as Promise<
        AdapterPayload | undefined
      >
    }

    findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return run(Effect.flatMap(currentDate, (at) => repo.findByUserCode(this.model, userCode, at))) as Promise<
        AdapterPayload | undefined
      >
    }

    consume(id: string): Promise<void> {
      return run(Effect.flatMap(Clock.currentTimeMillis, (ms) => repo.consume(this.model, id, Math.floor(ms / 1000))))
    }

    destroy(id: string): Promise<void> {
      return run(repo.destroy(this.model, id))
    }

    revokeByGrantId(grantId: string): Promise<void> {
      return run(Effect.flatMap(currentDate, (at) => repo.destroyGrant(grantId, at)))
    }
  }
})
