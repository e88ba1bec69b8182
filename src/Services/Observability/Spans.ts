import { Effect, FiberRef, type Tracer } from "effect"

/**
 * `Effect.withSpan` only while tracing is on. With tracing off a span is a no-op that still
 * costs some 35 fiber steps (its making, its scope, its ending); on a hot path that is a
 * twentieth of a call, so the span is skipped instead.
 */
export const withSpanWhenTracing =
  (name: string, options: Tracer.SpanOptions) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.flatMap(
      FiberRef.get(FiberRef.currentTracerEnabled),
      (tracing) => tracing ? Effect.withSpan(self, name, options) : self
    )
