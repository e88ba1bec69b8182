import { Data, Effect, Option } from "effect"
import { IdempotencyConflict, RequestInProgress } from "../../Errors/ApiErrors.js"

/**
 * Idempotency keys the way Stripe defines them, for any endpoint that takes one (purchases,
 * payments): a key already answered with the same request replays that answer; with
 * another request `idempotency_conflict`; while its first request still runs
 * `request_in_progress`. Where the keys are kept is the caller's: it says what a key
 * holds (`lookup`) and takes the key in the transaction that writes the request's first
 * effect (`run`), failing with `KeyTaken` when a concurrent twin took it first. A refusal
 * before that transaction keeps nothing under the key.
 */

/** A key used before: the fingerprint of its request and how to get its answer. */
export interface UsedKey<A, E, R> {
  readonly fingerprint: string
  /**
   * The first request's answer; none while it is still running. May finish a request
   * whose process died (its lease lapsed) before answering.
   */
  readonly answer: Effect.Effect<Option.Option<A>, E, R>
}

/** `run` found its key taken by a concurrent request with the same key. */
export class KeyTaken extends Data.TaggedError("KeyTaken") {}

export interface IdempotentRequest<A, E, R, B, EL, RL> {
  /** The caller's key; null runs the request without one. */
  readonly key: string | null
  /** A hash of what makes two requests the same (see `sha256OfCanonical`). */
  readonly fingerprint: string
  /** What the thing is, for messages: "purchase", "payment". */
  readonly noun: string
  /** What the key holds now; none when it is free (new, or past its retention). */
  readonly lookup: (key: string) => Effect.Effect<Option.Option<UsedKey<B, EL, RL>>, EL, RL>
  /** The request itself, taking the key (when there is one) as it writes its first effect. */
  readonly run: (key: string | null) => Effect.Effect<A, E | KeyTaken, R>
}

const isKeyTaken = (error: unknown): error is KeyTaken => error instanceof KeyTaken

const stillRunning = () =>
  new RequestInProgress({
    message: "A request with this idempotency_key is still running; retry shortly for its answer"
  })

/** The answer a used key replays; none when the key is free. */
const replay = <A, E, R, B, EL, RL>(request: IdempotentRequest<A, E, R, B, EL, RL>, key: string) =>
  Effect.gen(function*() {
    const used = yield* request.lookup(key)
    if (Option.isNone(used)) return Option.none<B>()
    if (used.value.fingerprint !== request.fingerprint) {
      return yield* new IdempotencyConflict({
        message: `This idempotency_key was used with a different request; use a new key for a new ${request.noun}`
      })
    }
    const answer = yield* used.value.answer
    if (Option.isNone(answer)) return yield* stillRunning()
    return answer
  })

/**
 * Runs a request under its idempotency key (see the module's comment). Answers the
 * request's own answer (A) or the one its key replays (B: what a key keeps, which may be
 * narrower, or wider, than what a request answers).
 */
export const idempotent = <A, E, R, B, EL, RL>(
  request: IdempotentRequest<A, E, R, B, EL, RL>
): Effect.Effect<A | B, Exclude<E, KeyTaken> | EL | IdempotencyConflict | RequestInProgress, R | RL> => {
  const key = request.key
  if (key === null) {
    return request.run(null).pipe(Effect.catchIf(isKeyTaken, () => Effect.dieMessage("A key was taken without a key")))
  }
  return Effect.flatMap(replay(request, key), (answered): Effect.Effect<
    A | B,
    Exclude<E, KeyTaken> | EL | IdempotencyConflict | RequestInProgress,
    R | RL
  > =>
    Option.isSome(answered)
      ? Effect.succeed(answered.value)
      : request.run(key).pipe(
        // The key went to a concurrent twin: answer as the key now says.
        Effect.catchIf(isKeyTaken, () =>
          Effect.flatMap(replay(request, key), (again) =>
            Option.isSome(again) ? Effect.succeed(again.value) : Effect.fail(stillRunning())))
      ))
}
