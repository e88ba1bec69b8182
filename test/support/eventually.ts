import { Effect } from "effect"

/**
 * Polls `check` until it answers something (not undefined, null or false), or fails after
 * `timeoutMs` naming `what`. Never a fixed sleep: a slow machine only waits longer. The one
 * polling loop of the suite: every wait for a condition goes through it.
 */
export const eventually = async <A>(
  check: () => A | undefined | null | false | Promise<A | undefined | null | false>,
  options: { readonly timeoutMs?: number; readonly intervalMs?: number; readonly what?: string } = {}
): Promise<A> => {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000)
  for (;;) {
    const value = await check()
    if (value !== undefined && value !== null && value !== false) return value
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${options.what ?? "a condition"}`)
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 50))
  }
}

/**
 * `eventually` for an effect's check, in real time whatever the effect's clock (a suite on
 * the TestClock polls a background write the same way).
 */
export const eventuallyEffect = <A, E, R>(
  check: Effect.Effect<A | undefined | null | false, E, R>,
  options: Parameters<typeof eventually>[1] = {}
): Effect.Effect<A, never, R> =>
  Effect.flatMap(
    Effect.runtime<R>(),
    (runtime) => Effect.promise(() => eventually(() => Effect.runPromise(Effect.provide(check, runtime)), options))
  )
