import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ChildService, killChildService, startChildService } from "../support/childService.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"

/**
 * The authorization server's library warns as it loads that it prefers Node 22. The project
 * supports Node 20.19 and later (README), so a start on Node 20 writes no such warning: the
 * log of a plain start holds nothing an operator should act on.
 */
let db: TestDatabase
let child: ChildService | undefined

beforeAll(async () => {
  db = await createTestDatabase("provider_notices")
})

afterAll(async () => {
  if (child !== undefined) await killChildService(child)
  await db?.drop()
})

describe("the authorization server's library at start", () => {
  it("leaves no runtime warning in the log", async () => {
    child = await startChildService({ DATABASE_URL: db.url })
    const output = child.output()
    // The service did build the authorization server: its metadata answers.
    const metadata = await fetch(`${child.url}/.well-known/oauth-authorization-server/oauth`)
    expect(metadata.status).toBe(200)
    expect(output).toContain("Service ready at")
    expect(output).not.toMatch(/Unsupported runtime/)
    expect(output).not.toMatch(/oidc-provider WARNING/)
  })
})
