import { Effect, Fiber, TestClock, TestContext } from "effect"
import { execFile } from "node:child_process"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { promisify } from "node:util"
import { beforeAll, describe, expect, it } from "vitest"
import { clientLayer, makeAgentGateway } from "../../../clients/typescript/src/client.js"
import { clientError, serviceError } from "../../../clients/typescript/src/errors.js"
import {
  AgentGateway,
  backoffMs,
  isServiceError,
  retryPolicy,
  retrySchedule,
  ServiceError
} from "../../../clients/typescript/src/index.js"
import { seedAgent, seedOrg, seedOrgKey } from "../../support/fixtures.js"
import { topUp } from "../../support/world.js"
import { world } from "./world.js"

/**
 * The TypeScript client (clients/typescript), derived from the HttpApi contract: against the
 * service on real PostgreSQL, and its retry rules against a loopback fault server with an
 * injected sleep (no real waiting).
 */
let testKey: string
let liveKey: string
let approvalKey: string

export const clientCases = () => {
  beforeAll(async () => {
    const org = await seedOrg(world.db)
    await topUp(world, org.orgId, 1_000_000n)
    testKey =
      (await seedAgent(world.db, org.orgId, { approvalThresholdCredits: null, monthlyBudgetCredits: 10_000_000n }))
        .key
    liveKey = (await seedAgent(world.db, org.orgId, { mode: "live", monthlyBudgetCredits: 10_000_000n })).key
    approvalKey = (await seedAgent(world.db, org.orgId, { approvalThresholdCredits: 10n })).key
  })

  const person = (i: number, domain = `acme${i}.example.com`) => ({ first_name: `Jo${i}`, last_name: "Doe", domain })

  const rejection = async (promise: Promise<unknown>) => {
    try {
      await promise
    } catch (error) {
      if (error instanceof ServiceError) return error
      throw error
    }
    throw new Error("expected a rejection")
  }

  describe("the TypeScript client against the service", () => {
    const client = () => new AgentGateway({ apiKey: testKey, baseUrl: world.server.url })

    it("recommends, buys, reads the receipt and replays a purchase under its key", async () => {
      const gateway = client()
      const ranked = await gateway.recommend({ task_type: "email_find" })
      expect(ranked.tools.map((tool) => tool.slug)).toContain("hunter-email-finder")
      const bought = await gateway.execute({
        tool: "hunter-email-finder",
        inputs: [person(1)],
        idempotency_key: "ts-1"
      })
      if (!("receipt_id" in bought) || bought.status !== "done") throw new Error("expected a result")
      expect(bought.charged).toEqual({ credits: "40", usd: "0.040" })
      const again = await gateway.execute({ tool: "hunter-email-finder", inputs: [person(1)], idempotency_key: "ts-1" })
      expect("receipt_id" in again && again.receipt_id).toBe(bought.receipt_id)
      const receipt = await gateway.receipt(bought.receipt_id)
      expect(receipt).toMatchObject({ id: bought.receipt_id, counts: { passed: 1 } })
      const dispute = await gateway.openDispute({ receipt_id: bought.receipt_id, item_index: 0, reason: "bounced" })
      expect((await gateway.dispute(dispute.id)).status).toBe("open")
    })

    it("rejects with the service's code: check_failed, unknown_tool, approval_required, unauthenticated", async () => {
      const failed = await rejection(
        client().execute({ tool: "hunter-email-finder", inputs: [person(2, "mock-fail.example.com")] })
      )
      expect([failed.code, failed.status, failed.retryable]).toEqual(["check_failed", 200, false])
      expect(failed.details).toMatchObject({ items: [{ index: 0 }] })
      const unknown = await rejection(client().execute({ tool: "nothing", inputs: [person(3)] }))
      expect(isServiceError(unknown, "unknown_tool") && unknown.status).toBe(404)
      const asked = await rejection(
        new AgentGateway({ apiKey: approvalKey, baseUrl: world.server.url }).execute({
          tool: "hunter-email-finder",
          inputs: [person(4)]
        })
      )
      expect(asked.code).toBe("approval_required")
      const approvalId = (asked.details["approval"] as { id: string }).id
      expect(
        (await new AgentGateway({ apiKey: approvalKey, baseUrl: world.server.url }).approval(approvalId)).status
      ).toBe("waiting")
      const stranger = await rejection(
        new AgentGateway({ apiKey: `sk_test_${"x".repeat(40)}`, baseUrl: world.server.url, maxRetries: 0 }).agent()
      )
      expect([stranger.code, stranger.status]).toEqual(["unauthenticated", 401])
    })

    it("pages through receipts, waits for a job with progress, and reads balance, agent and catalogue", async () => {
      const gateway = client()
      const bought: Array<string> = []
      for (const i of [10, 11, 12]) {
        const result = await gateway.execute({ tool: "hunter-email-finder", inputs: [person(i)] })
        if ("receipt_id" in result) bought.push(result.receipt_id)
      }
      const seen: Array<string> = []
      for await (const receipt of gateway.receipts({ pageSize: 1 })) seen.push(receipt.id)
      expect(new Set(seen).size).toBe(seen.length)
      expect(seen.filter((id) => bought.includes(id))).toEqual([...bought].reverse())

      const accepted = await gateway.execute({
        tool: "jina-reader",
        inputs: Array.from({ length: 30 }, (_, i) => ({ url: `https://ts.example.com/${i}` }))
      })
      if (!("job_id" in accepted)) throw new Error("expected a job")
      const progress: Array<number> = []
      const job = await gateway.waitForJob(accepted.job_id, {
        pollIntervalMs: 100,
        onProgress: (current) => progress.push(current.progress.done)
      })
      expect(job.status).toBe("done")
      expect(progress.at(-1)).toBe(30)
      expect(progress).toEqual([...progress].sort((a, b) => a - b))

      expect((await gateway.agent()).mode).toBe("test")
      expect((await gateway.balance()).monthly_budget.credits).toBe("10000000")
      expect((await gateway.endpoints({ q: "fakeprov/ok" })).map((endpoint) => endpoint.id)).toEqual(["fakeprov/ok"])
      const live = new AgentGateway({ apiKey: liveKey, baseUrl: world.server.url })
      expect(await live.call({ endpoint: "fakeprov/ok", query: { q: "ts" } })).toMatchObject({
        endpoint: "fakeprov/ok",
        status: "succeeded"
      })
    })

    it("an aborted call rejects with aborted", async () => {
      const controller = new AbortController()
      controller.abort()
      const aborted = await rejection(client().agent({ signal: controller.signal }))
      expect([aborted.code, aborted.status]).toEqual(["aborted", 0])
    })

    it("reads SERVICE_API_KEY and SERVICE_API_URL, and refuses to start without a key", async () => {
      const saved = { key: process.env["SERVICE_API_KEY"], url: process.env["SERVICE_API_URL"] }
      try {
        process.env["SERVICE_API_KEY"] = testKey
        process.env["SERVICE_API_URL"] = world.server.url
        expect((await new AgentGateway().agent()).mode).toBe("test")
        delete process.env["SERVICE_API_KEY"]
        expect(() => new AgentGateway()).toThrow(/SERVICE_API_KEY/)
      } finally {
        if (saved.key === undefined) delete process.env["SERVICE_API_KEY"]
        else process.env["SERVICE_API_KEY"] = saved.key
        if (saved.url === undefined) delete process.env["SERVICE_API_URL"]
        else process.env["SERVICE_API_URL"] = saved.url
      }
    })

    it("runs the example agent (examples/typescript_agent.ts): recommend, execute, check the receipt", async () => {
      const tsx = new URL("../../../node_modules/.bin/tsx", import.meta.url).pathname
      const example = new URL("../../../examples/typescript_agent.ts", import.meta.url).pathname
      const { stdout } = await promisify(execFile)(tsx, [example], {
        env: { PATH: process.env["PATH"] ?? "", SERVICE_API_KEY: testKey, SERVICE_API_URL: world.server.url },
        timeout: 60_000
      })
      expect(stdout).toMatch(/^best tool: \S+/m)
      expect(stdout).toMatch(/^receipt [0-9a-f-]{36}: (passed|partial), charged \d+ credits$/m)
      expect(stdout).toMatch(/^signature verified: key \S+$/m)
    }, 60_000)

    it("a script with an org key reaches the org endpoints: agents, a new agent, usage, approvals, events, receipt items", async () => {
      const org = await seedOrg(world.db)
      const orgKey = (await seedOrgKey(world.db, org.orgId, org.owner, "write")).secret
      const scripts = new AgentGateway({ apiKey: orgKey, baseUrl: world.server.url }).org(org.orgId)
      const made = await scripts.createAgent({ payload: { name: "Script-made" } })
      expect(made.key).toMatch(/^sk_test_/)
      const listed = await scripts.agents({ urlParams: { limit: 10 } })
      expect(listed.agents.map((agent) => agent.name)).toEqual(["Script-made"])
      expect((await scripts.usage({ urlParams: {} })).total_spend.credits).toBe("0")
      expect((await scripts.approvals({ urlParams: { limit: 10 } })).approvals).toEqual([])
      expect((await scripts.events({ urlParams: {} })).events).toEqual([])
      const bought = await new AgentGateway({ apiKey: made.key, baseUrl: world.server.url }).execute({
        tool: "hunter-email-finder",
        inputs: [{ first_name: "Ada", last_name: "Byron", domain: "analytical.example.com" }]
      })
      const receiptId = bought.status === "done" ? bought.receipt_id : ""
      const items = await scripts.receiptItems(receiptId, { urlParams: { limit: 1 } })
      expect(items.items.map((item) => [item.idx, item.input])).toEqual([
        [0, { first_name: "Ada", last_name: "Byron", domain: "analytical.example.com" }]
      ])
      expect(items.has_more).toBe(false)
      const elsewhere = await rejection(
        new AgentGateway({ apiKey: orgKey, baseUrl: world.server.url }).org((await seedOrg(world.db)).orgId).agents({
          urlParams: { limit: 10 }
        })
      )
      expect(elsewhere.code).toBe("forbidden")
    })

    it("the Effect API gives the typed client and the retrying runner", async () => {
      const agent = await Effect.runPromise(
        Effect.flatMap(
          makeAgentGateway({ apiKey: testKey, baseUrl: world.server.url }),
          (gateway) => gateway.run((api) => api.agentSelf.agent())
        ).pipe(Effect.provide(clientLayer))
      )
      expect(agent.agent.mode).toBe("test")
    })
  })

  // -- the retry rules against a fault server -------------------------------------------------

  interface Canned {
    readonly status: number
    readonly body?: unknown
    readonly raw?: string
    readonly headers?: Record<string, string>
    readonly delayMs?: number
  }

  const errorBody = (code: string, retryable: boolean) => ({
    error: { code, message: "canned", doc_url: `http://x/docs/errors#${code}`, retryable }
  })
  const done = {
    status: "done",
    receipt_id: "r1",
    mode: "test",
    tool: { id: "7f1c1a52-6a3e-4f0e-9b1d-2c8f4a0e9d11", slug: "s", name: "n", provider: "p" },
    item_count: 1,
    charged: { credits: "40", usd: "0.040" },
    counts: { passed: 1, partial: 0, failed: 0, expired: 0, pending: 0 },
    fallback_used: false,
    items: []
  }

  const faultServer = async (script: ReadonlyArray<Canned>) => {
    const queue = [...script]
    const seen: Array<{ body: any }> = []
    const server = http.createServer((req, res) => {
      let raw = ""
      req.on("data", (chunk) => (raw += chunk))
      req.on("end", () => {
        seen.push({ body: raw.length > 0 ? JSON.parse(raw) : undefined })
        const answer = queue.length > 1 ? queue.shift()! : queue[0]!
        setTimeout(() => {
          const payload = answer.raw ?? JSON.stringify(answer.body ?? {})
          res.writeHead(answer.status, {
            "content-type": answer.raw ? "text/html" : "application/json",
            ...answer.headers
          })
          res.end(payload)
        }, answer.delayMs ?? 0)
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    return { url, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
  }

  const faulty = (url: string, options: { maxRetries?: number; timeoutMs?: number; random?: () => number } = {}) => {
    const slept: Array<number> = []
    const gateway = new AgentGateway({
      apiKey: "sk_test_fault",
      baseUrl: url,
      sleep: async (ms) => {
        slept.push(ms)
      },
      ...options
    })
    return { gateway, slept }
  }

  const buy = (gateway: AgentGateway, key?: string) =>
    gateway.execute({ tool: "t", inputs: [{ a: "b" }], ...(key ? { idempotency_key: key } : {}) })

  describe("the TypeScript client's retry rules", () => {
    it("waits out Retry-After up to 60 seconds, and backs off past it", async () => {
      const server = await faultServer([
        { status: 429, body: errorBody("rate_limited", true), headers: { "retry-after": "7" } },
        { status: 429, body: errorBody("rate_limited", true), headers: { "retry-after": "3600" } },
        { status: 200, body: done }
      ])
      try {
        const { gateway, slept } = faulty(server.url, { random: () => 0 })
        expect(await buy(gateway)).toMatchObject({ status: "done" })
        expect(slept).toEqual([7_000, 500])
      } finally {
        await server.close()
      }
    })

    it("retries a provider_error with the same idempotency key, then gives up after 3 retries", async () => {
      const server = await faultServer([
        { status: 502, body: errorBody("provider_error", true) },
        { status: 502, body: errorBody("provider_error", true) },
        { status: 200, body: done }
      ])
      try {
        const { gateway, slept } = faulty(server.url, { random: () => 0.999 })
        await buy(gateway)
        expect(new Set(server.seen.map((request) => request.body.idempotency_key)).size).toBe(1)
        expect(server.seen).toHaveLength(3)
        expect(slept[0]).toBeGreaterThanOrEqual(250)
        expect(slept[0]).toBeLessThanOrEqual(500)
        expect(slept[1]).toBeGreaterThanOrEqual(500)
        expect(slept[1]).toBeLessThanOrEqual(1_000)
        await buy(gateway, "mine")
        expect(server.seen.at(-1)!.body.idempotency_key).toBe("mine")
      } finally {
        await server.close()
      }
      const failing = await faultServer([{ status: 502, body: errorBody("provider_error", true) }])
      try {
        const { gateway, slept } = faulty(failing.url)
        const error = await rejection(buy(gateway))
        expect([error.code, error.status, error.retryable]).toEqual(["provider_error", 502, true])
        expect([failing.seen.length, slept.length]).toEqual([4, 3])
        const none = faulty(failing.url, { maxRetries: 0 })
        await rejection(buy(none.gateway))
        expect(failing.seen).toHaveLength(5)
      } finally {
        await failing.close()
      }
    })

    it("does not retry an error that is not retryable, a redirect or an HTTP error without the body", async () => {
      const server = await faultServer([
        { status: 402, body: errorBody("insufficient_credits", false) },
        { status: 302, raw: "", headers: { location: "http://elsewhere.example/" } },
        { status: 503, raw: "<html>down</html>" }
      ])
      try {
        const { gateway, slept } = faulty(server.url)
        expect((await rejection(buy(gateway))).code).toBe("insufficient_credits")
        const redirect = await rejection(buy(gateway))
        expect([redirect.code, redirect.status]).toEqual(["unexpected_redirect", 0])
        const plain = await rejection(buy(gateway))
        expect([plain.code, plain.status, plain.retryable]).toEqual(["http_error", 503, false])
        expect([server.seen.length, slept]).toEqual([3, []])
      } finally {
        await server.close()
      }
    })

    it("maps a timeout and a refused connection to their client codes, retried", async () => {
      const slow = await faultServer([{ status: 200, body: done, delayMs: 1_000 }])
      try {
        const { gateway, slept } = faulty(slow.url, { timeoutMs: 200, maxRetries: 1 })
        const timedOut = await rejection(buy(gateway))
        expect([timedOut.code, timedOut.status, timedOut.retryable]).toEqual(["timeout", 0, true])
        expect(slept).toHaveLength(1)
      } finally {
        await slow.close()
      }
      const closed = await faultServer([{ status: 200, body: done }])
      const url = closed.url
      await closed.close()
      const { gateway, slept } = faulty(url, { maxRetries: 2 })
      const refused = await rejection(buy(gateway))
      expect([refused.code, refused.status]).toEqual(["network_error", 0])
      expect(slept).toHaveLength(2)
    })

    it("backs off from 0.5 s, doubling, up to 8 s, with jitter between half and all of it", () => {
      for (let retries = 0; retries < 8; retries++) {
        const ceiling = Math.min(500 * 2 ** retries, 8_000)
        expect(backoffMs(retryPolicy({ random: () => 0 }), retries)).toBe(ceiling / 2)
        const high = backoffMs(retryPolicy({ random: () => 0.999999 }), retries)
        expect(high).toBeGreaterThanOrEqual(ceiling / 2)
        expect(high).toBeLessThanOrEqual(ceiling)
      }
      expect(() => retryPolicy({ maxRetries: -1 })).toThrow()
    })

    it("waits on the Effect clock when no sleep is given, and stops at a non-retryable error", async () => {
      const tries: Array<number> = []
      const failures = [
        serviceError("rate_limited", "slow down", {}, 7),
        clientError("network_error", "down"),
        serviceError("insufficient_credits", "empty")
      ]
      const outcome = await Effect.runPromise(
        Effect.gen(function*() {
          const call = Effect.suspend(() => {
            tries.push(tries.length)
            return Effect.fail(failures[Math.min(tries.length - 1, failures.length - 1)]!)
          })
          const fiber = yield* Effect.fork(
            Effect.flip(Effect.retry(call, retrySchedule(retryPolicy({ random: () => 0 }))))
          )
          yield* TestClock.adjust("6999 millis")
          const beforeRetryAfter = tries.length
          yield* TestClock.adjust("1 millis")
          const afterRetryAfter = tries.length
          yield* TestClock.adjust("500 millis") // the second retry backs off: half of 1 s with no jitter
          const error = yield* Fiber.join(fiber)
          return { beforeRetryAfter, afterRetryAfter, code: error.code }
        }).pipe(Effect.provide(TestContext.TestContext))
      )
      expect(outcome).toEqual({ beforeRetryAfter: 1, afterRetryAfter: 2, code: "insufficient_credits" })
      expect(tries).toHaveLength(3)
    })
  })
}
