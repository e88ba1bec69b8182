import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { emailFindInput } from "../Purchasing/support.js"
import { bearer, seedAgent, seedOrg } from "../support/fixtures.js"
import { request } from "../support/server.js"
import { startWorld, type World } from "../support/world.js"

/**
 * `GET /v1/orgs/{orgId}/exports/{dataset}`: CSV and JSON Lines over a range of UTC days,
 * streamed as the rows are read; checked on a large seeded range and on real purchases.
 */
let world: World

beforeAll(async () => {
  world = await startWorld("exports", { provider: true })
})

afterAll(() => world?.close())

const download = (orgId: string, token: string, path: string) =>
  fetch(`${world.server.url}/v1/orgs/${orgId}/exports/${path}`, { headers: bearer(token) })

/** A CSV line's cells (quoted cells may hold commas and doubled quotes; no newlines in these rows). */
const cells = (line: string) =>
  Array.from(line.matchAll(/("(?:[^"]|"")*"|[^,]*)(,|$)/g), (m) => m[1]!.replace(/^"|"$/g, "").replace(/""/g, "\""))
    .slice(0, -1)

describe("exports", () => {
  it("streams a large range of ledger entries as CSV and as JSON Lines, every row once", async () => {
    const org = await seedOrg(world.db)
    const rows = 60_000
    await world.db.query(
      `INSERT INTO ledger_entries (id, org_id, kind, amount, credits, note, created_at)
       SELECT gen_random_uuid(), $1, 'adjustment', g, g, 'seeded, "quoted"', timestamptz '2026-01-01' + (g % 300) * interval '1 day'
       FROM generate_series(1, $2) AS g`,
      [org.orgId, rows]
    )
    const csv = await download(org.orgId, org.owner.sessionToken, "ledger?from=2026-01-01&to=2026-12-31")
    expect(csv.status).toBe(200)
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8")
    expect(csv.headers.get("content-length")).toBeNull()
    expect(csv.headers.get("content-disposition")).toBe(
      "attachment; filename=\"ledger-2026-01-01-to-2026-12-31.csv\""
    )
    const lines = (await csv.text()).split("\r\n")
    expect(lines.at(-1)).toBe("")
    expect(lines[0]).toBe("id,seq,created_at,kind,balance_change_credits,credits,agent_id,hold_id,note")
    expect(lines.length - 2).toBe(rows)
    const first = cells(lines[1]!)
    expect(first[3]).toBe("adjustment")
    expect(first[8]).toBe("seeded, \"quoted\"")
    const amounts = new Set(lines.slice(1, -1).map((line) => cells(line)[4]))
    expect(amounts.size).toBe(rows)

    const jsonl = await download(org.orgId, org.owner.sessionToken, "ledger?from=2026-03-01&to=2026-03-31&format=jsonl")
    expect(jsonl.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8")
    const objects = (await jsonl.text()).trim().split("\n").map((line) => JSON.parse(line))
    expect(objects.length).toBe(31 * 200)
    expect(objects.every((o) => o.created_at >= "2026-03-01" && o.created_at < "2026-04-01")).toBe(true)
    expect(Object.keys(objects[0])).toEqual(
      ["id", "seq", "created_at", "kind", "balance_change_credits", "credits", "agent_id", "hold_id", "note"]
    )
  })

  it("exports receipts with their items' inputs, calls, and usage with refusals", async () => {
    const org = await seedOrg(world.db)
    const agent = await seedAgent(world.db, org.orgId, { mode: "test", name: "=cmd" })
    const bought = await request(`${world.server.url}/v1/execute`, {
      method: "POST",
      headers: bearer(agent.key),
      body: { tool: "hunter-email-finder", inputs: [emailFindInput(1), emailFindInput(2)] }
    })
    expect(bought.status).toBe(200)
    const called = await request(`${world.server.url}/v1/call`, {
      method: "POST",
      headers: bearer(agent.key),
      body: { endpoint: "fakeprov/ok" }
    })
    expect(called.json.status).toBe("test")
    const broke = await seedAgent(world.db, org.orgId, { mode: "live", name: "broke" })
    expect(
      (await request(`${world.server.url}/v1/call`, {
        method: "POST",
        headers: bearer(broke.key),
        body: { endpoint: "fakeprov/ok" }
      })).status
    ).toBe(402)

    const receipts = (await (await download(org.orgId, org.owner.sessionToken, "receipts?format=jsonl")).text())
      .trim().split("\n").map((line) => JSON.parse(line))
    expect(receipts.map((r) => r.item_index)).toEqual([0, 1])
    expect(receipts[0]).toMatchObject({
      receipt_id: bought.json.receipt_id,
      agent_name: "=cmd",
      mode: "test",
      tool: "hunter-email-finder",
      input: emailFindInput(1)
    })

    // A name a spreadsheet would run as a formula is written as text.
    const csv = (await (await download(org.orgId, org.owner.sessionToken, "calls")).text()).split("\r\n")
    // The header and the test call (a refused call leaves no row).
    expect(csv).toHaveLength(3)
    const [header, ...calls] = csv.slice(0, -1).map(cells)
    const named = (row: Array<string>) => Object.fromEntries(header!.map((h, i) => [h, row[i]]))
    expect(calls.map(named)).toEqual(expect.arrayContaining([
      expect.objectContaining({ agent_name: "'=cmd", endpoint: "fakeprov/ok", mode: "test", status: "test" })
    ]))
    // A test row moved no credit: its charge is 0, so a column's sum is what was spent; its price stays.
    const testCall = calls.map(named).find((row) => row["mode"] === "test")!
    expect(testCall["charged_credits"]).toBe("0")
    expect(testCall["price_credits"]).toBe(called.json.charged.credits)
    expect(Number(testCall["price_credits"])).toBeGreaterThan(0)
    expect(receipts.map((r) => r.cost_credits)).toEqual(["0", "0"])

    const usage = (await (await download(org.orgId, org.owner.sessionToken, "usage?format=jsonl")).text())
      .trim().split("\n").map((line) => JSON.parse(line))
    const today = new Date().toISOString().slice(0, 10)
    expect(usage).toEqual(expect.arrayContaining([
      expect.objectContaining({ day: today, agent_name: "=cmd", spend_credits: "0", items: 2, calls: 1, refusals: 0 }),
      expect.objectContaining({ day: today, agent_name: "broke", spend_credits: "0", refusals: 1 })
    ]))
  })

  it("refuses a bad range and another org's data before anything is sent", async () => {
    const org = await seedOrg(world.db)
    const bad = await download(org.orgId, org.owner.sessionToken, "calls?from=2026-02-30")
    expect(bad.status).toBe(400)
    expect((await bad.json()).error.code).toBe("invalid_input")
    expect((await download(org.orgId, org.owner.sessionToken, "everything")).status).toBe(400)
    const other = await seedOrg(world.db)
    expect((await download(other.orgId, org.owner.sessionToken, "calls")).status).not.toBe(200)
  })
})
