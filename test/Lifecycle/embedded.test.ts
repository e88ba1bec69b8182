import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { request, startServer } from "../support/server.js"

/** The embedded default: no DATABASE_URL, PGlite under DATA_DIR, the same migrations. */
describe("embedded PGlite default", () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-pglite-"))
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }))

  it("migrates, loads the catalogue and serves; a restart keeps the data and migrates nothing twice", async () => {
    const first = await startServer({ DATA_DIR: dataDir })
    try {
      const status = await request(`${first.url}/v1/status`)
      expect(status.status).toBe(200)
      expect(status.json.database.status).toBe("ok")
      expect(status.json.catalogue.endpoints).toBe(947)
      const join = await request(`${first.url}/v1/waitlist`, { method: "POST", body: { email: "grace@example.com" } })
      expect(join.status).toBe(202)
    } finally {
      await first.close()
    }
    expect(fs.existsSync(path.join(dataDir, "pgdata"))).toBe(true)

    const second = await startServer({ DATA_DIR: dataDir })
    try {
      const tools = await request(`${second.url}/v1/tools`)
      expect(tools.status).toBe(200)
      expect(tools.json.tools.length).toBeGreaterThan(20)
      // The address joined before the restart is still there: joining again changes nothing.
      const again = await request(`${second.url}/v1/waitlist`, { method: "POST", body: { email: "grace@example.com" } })
      expect(again.status).toBe(202)
    } finally {
      await second.close()
    }
  })
})
