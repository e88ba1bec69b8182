import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ChildService, killChildService, startChildService } from "../support/childService.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { type FakeProvider, seedTestCatalogue, startFakeProvider } from "../support/fakeProvider.js"
import { bearer, seedAgent, seedOrg } from "../support/fixtures.js"
import { invariants } from "../support/ledgerChecks.js"
import { eventually, type LedgerRuntime, ledgerRuntime, topUp } from "../support/world.js"

/**
 * Clean shutdown of the service as `npm start` runs it: on SIGTERM or SIGINT it stops
 * accepting connections, lets calls in flight finish (the provider answers after 1.5 s),
 * and exits 0 with every credit accounted for; past the grace, what still runs answers 503
 * with the error body and its hold is released; a second signal exits at once.
 */
let db: TestDatabase
let fake: FakeProvider
let ledger: LedgerRuntime
let child: ChildService | undefined

beforeAll(async () => {
  db = await createTestDatabase("shutdown")
  fake = await startFakeProvider()
  ledger = ledgerRuntime(db)
})

afterAll(async () => {
  if (child !== undefined) await killChildService(child)
  await ledger?.dispose()
  await fake?.close()
  await db?.drop()
})

const start = async (env: Record<string, string> = {}) => {
  fake.seen.length = 0
  child = await startChildService({
    DATABASE_URL: db.url,
    PROVIDERS_UPSTREAM: fake.url,
    GATEWAY_TIMEOUT_MS: "20000",
    ...env
  })
  await seedTestCatalogue(db)
  const org = await seedOrg(db)
  await topUp({ ledger }, org.orgId, 1_000n)
  const agent = await seedAgent(db, org.orgId, { mode: "live", monthlyBudgetCredits: 100_000n })
  return { service: child, orgId: org.orgId, agent }
}

const callGateway = (url: string, key: string, endpoint: string) =>
  fetch(`${url}/v1/call`, {
    method: "POST",
    headers: { ...bearer(key), "content-type": "application/json" },
    body: JSON.stringify({ endpoint })
  }).then(async (response) => ({ status: response.status, headers: response.headers, json: await response.json() }))

const exited = (service: ChildService) =>
  new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    if (service.process.exitCode !== null || service.process.signalCode !== null) {
      return resolve({ code: service.process.exitCode, signal: service.process.signalCode })
    }
    service.process.once("exit", (code, signal) => resolve({ code, signal }))
  })

/** Polls until the fake provider has received `count` requests for `path`. */
const providerReceived = (path: string, count: number) =>
  eventually(() => fake.seen.filter((seen) => seen.url.includes(path)).length >= count, {
    timeoutMs: 60_000,
    intervalMs: 20,
    what: `the provider receiving ${count} ${path}`
  })

const connects = (url: string) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(Number(new URL(url).port), "127.0.0.1")
    socket.once("connect", () => (socket.destroy(), resolve(true)))
    socket.once("error", () => resolve(false))
  })

describe("clean shutdown", () => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`on ${signal}: refuses new connections, lets calls in flight finish, exits 0`, async () => {
      const { service, orgId, agent } = await start()
      const calls = [1, 2, 3].map(() => callGateway(service.url, agent.key, "fakeprov/late"))
      await providerReceived("/v1/late", 3)
      service.process.kill(signal)
      const exit = exited(service)

      const answers = await Promise.all(calls)
      for (const answer of answers) {
        expect(answer.status).toBe(200)
        expect(answer.json).toMatchObject({ status: "succeeded", charged: { credits: "10" } })
      }
      expect(await connects(service.url)).toBe(false)
      expect(await exit).toEqual({ code: 0, signal: null })
      expect(service.output()).toContain("Requests in flight finished")
      const money = await invariants(db, orgId)
      expect(money).toMatchObject({ balance: 970n, entriesSum: 970n, openHolds: 0, mismatchedHolds: 0 })
      child = undefined
    }, 120_000)
  }

  it("past the grace, a call still waiting answers 503 with the error body and its hold is released", async () => {
    const { service, orgId, agent } = await start({ SHUTDOWN_GRACE_MS: "500" })
    const call = callGateway(service.url, agent.key, "fakeprov/hang")
    await providerReceived("/v1/hang", 1)
    service.process.kill("SIGTERM")
    const answer = await call
    expect(answer.status).toBe(503)
    expect(answer.headers.get("retry-after")).toBe("1")
    expect(answer.json).toEqual({
      error: {
        code: "service_unavailable",
        message: expect.stringContaining("shut down before this request finished"),
        doc_url: expect.stringContaining("#service_unavailable"),
        retryable: true
      }
    })
    expect(await exited(service)).toEqual({ code: 0, signal: null })
    const money = await invariants(db, orgId)
    expect(money).toMatchObject({ balance: 1_000n, entriesSum: 1_000n, openHolds: 0, mismatchedHolds: 0 })
    child = undefined
  }, 120_000)

  it("a second SIGINT while draining exits at once", async () => {
    const { service, agent } = await start()
    const call = callGateway(service.url, agent.key, "fakeprov/hang").catch(() => "connection closed")
    await providerReceived("/v1/hang", 1)
    const firstAt = Date.now()
    service.process.kill("SIGINT")
    // Draining, and past the half second in which another signal counts as a copy of the
    // first (src/main.ts).
    await eventually(() => service.output().includes("Shutting down") && Date.now() - firstAt > 600, {
      what: "the drain to begin"
    })
    service.process.kill("SIGINT")
    expect(await exited(service)).toEqual({ code: 130, signal: null })
    expect(await call).toBe("connection closed")
    child = undefined
  }, 120_000)
})
