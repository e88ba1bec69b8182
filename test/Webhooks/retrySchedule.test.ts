import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Option } from "effect"
import { delayAfterTries } from "../../src/Services/Background/DurableRetry.js"
import { mailRetrySchedule } from "../../src/Services/Mailer/MailWorker.js"
import { webhookRetrySchedule } from "../../src/Services/Webhooks/Delivery.js"

/** The durable retry waits come from Effect Schedules, stepped without sleeping. */
const waits = (schedule: Parameters<typeof delayAfterTries>[0], upTo: number) =>
  Effect.forEach(
    Array.from({ length: upTo }, (_, i) => i + 1),
    (tries) => Effect.map(delayAfterTries(schedule, tries, 1_800_000_000_000), Option.map(Duration.toMinutes))
  )

describe("retry schedules", () => {
  it.effect("webhooks: 1, 5, 15, 30, 60, 120, 240, 480, 480 minutes, then none (ten tries)", () =>
    Effect.gen(function*() {
      const result = yield* waits(webhookRetrySchedule, 11)
      expect(result.slice(0, 9).map(Option.getOrThrow)).toEqual([1, 5, 15, 30, 60, 120, 240, 480, 480])
      expect(result.slice(9).every(Option.isNone)).toBe(true)
      // Together they span just under a day.
      expect(result.slice(0, 9).reduce((sum, wait) => sum + Option.getOrThrow(wait), 0)).toBe(1431)
    }))

  it.effect("mail: 30 s doubling to at most an hour, fifteen tries in all", () =>
    Effect.gen(function*() {
      const result = yield* waits(mailRetrySchedule, 16)
      const seconds = result.filter(Option.isSome).map((wait) => Math.round(Option.getOrThrow(wait) * 60))
      expect(seconds).toEqual([30, 60, 120, 240, 480, 960, 1920, 3600, 3600, 3600, 3600, 3600, 3600, 3600])
      expect(Option.isNone(result[14]!)).toBe(true)
    }))
})
