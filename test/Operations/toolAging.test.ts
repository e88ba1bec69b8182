import { expect, layer } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { Events } from "../../src/Services/Events/Events.js"
import { MailOutboxLive } from "../../src/Services/Mailer/MailOutboxLive.js"
import { Execute } from "../../src/Services/Purchasing/Execute.js"
import { PurchasingLive } from "../../src/Services/Purchasing/PurchasingLive.js"
import { Tools } from "../../src/Services/Tools/Tools.js"
import { emailFindInput, seedBuyer } from "../Purchasing/support.js"
import { agentOf } from "../support/fixtures.js"
import { makeShiftableClock } from "../support/shiftableClock.js"
import { serviceTier, SuiteDatabase } from "../support/testLayers.js"
import { benchmarkedToday } from "../support/world.js"

/**
 * A tool's benchmark ages out: the publishing gate on a report's age (35 days) is a rule of
 * the tools and purchasing services, proven on them over the suite's database with their
 * clock moved, without HTTP. The clock is the shiftable one (today plus what the test moves),
 * not TestClock: a purchase's own timeouts and pauses keep real time. The routes' statuses and
 * bodies are `wire.test.ts`'s.
 */
const services = PurchasingLive.pipe(
  Layer.provideMerge(Tools.Default),
  Layer.provideMerge(Events.Default),
  Layer.provideMerge(MailOutboxLive)
)

const clock = makeShiftableClock()

layer(serviceTier("tool_aging", services))((it) => {
  it.effect("stops the tool being sold on its own after 35 days, without anyone acting", () =>
    Effect.gen(function*() {
      const db = yield* SuiteDatabase
      // Every tool benchmarked today, as the service's suites have it.
      yield* Effect.promise(() => benchmarkedToday(db))
      const buyer = yield* Effect.promise(() => seedBuyer({ db }))
      const agent = yield* Effect.promise(() => agentOf(db, buyer.agent.agentId))
      const tools = yield* Tools
      const execute = yield* Execute
      const hunter = Effect.map(tools.list, (all) => all.find((tool) => tool.slug === "hunter-email-finder"))
      const body = { tool: "hunter-email-finder", inputs: [emailFindInput(1)] }

      expect(yield* hunter).toMatchObject({ purchasable: true })
      // Bought at once (200 on the wire): neither an approval asked for nor a job.
      const bought = yield* execute.execute(agent, body, "http://localhost")
      expect(bought).toMatchObject({ status: "done" })

      clock.advance("36 days")
      expect(yield* hunter).toMatchObject({ purchasable: false, unavailable_reasons: ["benchmark_missing"] })
      expect((yield* tools.list).filter((tool) => tool.purchasable)).toEqual([])
      const refused = yield* Effect.either(execute.execute(agent, body, "http://localhost"))
      expect(Either.isLeft(refused) && refused.left._tag).toBe("tool_unavailable")
      expect(Either.isLeft(refused) && refused.left.message).toContain("no benchmark in the last 35 days")
    }).pipe(Effect.provide(clock.layer)))
})
