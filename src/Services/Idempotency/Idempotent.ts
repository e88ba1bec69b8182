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
 *
 * A request may also run before its key is looked up (`lookupFirst: false`), sparing that
 * read when the key is new, the usual case: taking the key then finds a used one (KeyTaken,
 * answered as the key says), and the request checks `keyFree` itself before any other
 * effect and before answering a refusal made before it took the key (`refusalAsKeySays`),
 * so a used key still replays whatever the request would answer now.
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
  /**
   * The request itself, taking the key (when there is one) as it writes its first effect.
   * `keyFree` fails with KeyTaken when the key holds a request already (a no-op when the
   * key was looked up first).
   */
  readonly run: (
    key: string | null,
    keyFree: Effect.Effect<void, KeyTaken | EL, RL>
  ) => Effect.Effect<A, E | KeyTaken, R>
  /** False: run the request before looking its key up (see the module's comment). Default true. */
  readonly lookupFirst?: boolean
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
 * For a request run before its key is looked up: a refusal it makes before taking the key
 * stands only when the key is free; with a used key the request answers as the key says.
 */
export const refusalAsKeySays =
  <EK, RK>(keyFree: Effect.Effect<void, KeyTaken | EK, RK>) =>
  <X, E, R>(effect: Effect.Effect<X, E, R>): Effect.Effect<X, E | KeyTaken | EK, R | RK> =>
    Effect.catchAll(
      effect,
      (error): Effect.Effect<never, E | KeyTaken | EK, RK> =>
        isKeyTaken(error) ? Effect.fail(error) : Effect.zipRight(keyFree, Effect.fail(error))
    )

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
    return request.run(null, Effect.void).pipe(
      Effect.catchIf(isKeyTaken, () => Effect.dieMessage("A key was taken without a key"))
    )
  }
  // The key went to a concurrent twin (or, run before the lookup, was used already):
  // answer as the key now says.
  const answeredAsKeySays = (
    run: Effect.Effect<A, E | KeyTaken, R>
  ): Effect.Effect<A | B, Exclude<E, KeyTaken> | EL | IdempotencyConflict | RequestInProgress, R | RL> =>
    run.pipe(
      Effect.catchIf(isKeyTaken, () =>
        Effect.flatMap(replay(request, key), (again) =>
          Option.isSome(again)
            ? Effect.succeed<A | B>(again.value)
            // Free by now (its holder was let go, or it expired meanwhile): the request runs once more.
            : run.pipe(Effect.catchIf(isKeyTaken, () => Effect.fail(stillRunning())))))
    )
  if (request.lookupFirst === false) {
    const keyFree = Effect.flatMap(
      request.lookup(key),
      (used) => Option.isSome(used) ? Effect.fail(new KeyTaken()) : Effect.void
    )
    return answeredAsKeySays(request.run(key, keyFree))
  }
  return Effect.flatMap(
    replay(request, key),
    (answered) =>
      Option.isSome(answered) ? Effect.succeed(answered.value) : answeredAsKeySays(request.run(key, Effect.void))
  )
}
