import { Effect, Option, Runtime } from "effect"
import type { Adapter, AdapterPayload } from "oidc-provider"
import { currentDate } from "../../Domain/Timestamps.js"
import { OAuthRecordsRepo } from "./OAuthRecordsRepo.js"

/**
 * The authorization server's storage (oidc-provider's adapter interface) on PostgreSQL,
 * shared by every replica: one adapter instance per model, each call run on the service's
 * runtime (its SQL client and clock). `alreadyUsed` is the library's refusal of a code or
 * refresh token used twice.
 */
export const makePgAdapter = (alreadyUsed: (model: string) => Error) =>
  Effect.gen(function*() {
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

      /**
       * One use of a code or refresh token. A use that finds it taken by another at the same
       * moment (both read it unused) revokes the grant, as a second use does (RFC 9700), and
       * is refused with the library's `invalid_grant`.
       */
      consume(id: string): Promise<void> {
        const model = this.model
        return run(Effect.gen(function*() {
          const at = yield* currentDate
          const usedBefore = yield* repo.consume(model, id, Math.floor(at.getTime() / 1000))
          if (Option.isNone(usedBefore)) return true
          yield* repo.destroyGrant(usedBefore.value, at)
          return false
        })).then((taken) => {
          if (!taken) throw alreadyUsed(model)
        })
      }

      destroy(id: string): Promise<void> {
        return run(repo.destroy(this.model, id))
      }

      revokeByGrantId(grantId: string): Promise<void> {
        return run(Effect.flatMap(currentDate, (at) => repo.destroyGrant(grantId, at)))
      }
    }
  })
