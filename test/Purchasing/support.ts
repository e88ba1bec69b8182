import type { TestDatabase } from "../support/database.js"
import { seedAgent, type SeededAgent, type SeededOrg, seedOrg } from "../support/fixtures.js"

/** Purchasing's seeds: a buyer (an org and its agent), an administrator, inputs and events. */
export interface Buyer {
  readonly org: SeededOrg
  readonly agent: SeededAgent
}

/** An org with an owner and a (test, by default) agent. */
export const seedBuyer = async (
  world: { readonly db: TestDatabase },
  options: Parameters<typeof seedAgent>[2] & { plan?: "payg" | "pro" | "max" } = {}
): Promise<Buyer> => {
  const org = await seedOrg(world.db, { plan: options.plan ?? "payg" })
  const agent = await seedAgent(world.db, org.orgId, {
    approvalThresholdCredits: null,
    monthlyBudgetCredits: 10_000_000n,
    ...options
  })
  return { org, agent }
}

export const emailFindInput = (i: number, marker = "") => ({
  first_name: `Jane${i}`,
  last_name: "Doe",
  domain: marker.length > 0 ? `${marker}.example.com` : `acme${i}.example.com`
})

/** The agent's events of a type, oldest first. */
export const eventsOf = (db: TestDatabase, orgId: string, type: string) =>
  db.query(`SELECT data FROM events WHERE org_id = $1 AND type = $2 ORDER BY seq`, [orgId, type]).then((rows) =>
    rows.map((row) => row.data)
  )
