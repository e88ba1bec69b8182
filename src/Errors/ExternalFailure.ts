import { Data } from "effect"

/**
 * A call to an outside library or service (the identity provider, Stripe, Redis) that threw,
 * rejected or timed out. Internal only: each caller turns it into its own API error
 * (`idp_failed`, `payment_unavailable`, ...) or a fallback, and logs `cause`.
 */
export class ExternalFailure extends Data.TaggedError("ExternalFailure")<{
  readonly what: string
  readonly cause: unknown
}> {
  /** The cause as one line for a log. */
  get detail(): string {
    return this.cause instanceof Error ? `${this.cause.name}: ${this.cause.message}` : String(this.cause)
  }
}
