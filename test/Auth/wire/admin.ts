import * as OTPAuth from "otpauth"
import { describe, expect, it } from "vitest"
import { runAdminCli } from "../../support/adminCli.js"
import { createAdmin as createAdminAs, expectError, freshIp, makeOrgKey, owner } from "../../support/people.js"
import { call } from "../../support/world.js"
import { world } from "./world.js"

/** Administrative sign-in: created by the command line, email + password + TOTP, lockout. */

/** Runs `npm run admin -- <args>` against the suite's database, password on standard input. */
const adminCli = (args: Array<string>, stdin: string) => runAdminCli({ DATABASE_URL: world.db.url }, args, stdin)

const password = "a long admin passphrase 42"
let totpSecret: string
const email = "ops@example.com"

const code = (secret = totpSecret, at = Date.now()) =>
  OTPAuth.TOTP.generate({ secret: OTPAuth.Secret.fromBase32(secret), timestamp: at })

/** Further administrators, made in-process by the same service the command uses. */
const createAdmin = (address: string) => createAdminAs(world, address, password)

const signIn = (body: Record<string, unknown>) => call(world, "POST", "/admin/sign-in", { body, ip: freshIp() })

export const adminCases = () => {
  describe("creating administrators", () => {
    it("npm run admin -- create prints the TOTP secret once and stores only a scrypt hash and a sealed secret", async () => {
      const made = await adminCli(["create", "--email", email], `${password}\n`)
      expect(made.stderr).toBe("")
      expect(made.code).toBe(0)
      totpSecret = made.stdout.match(/^\s+([A-Z2-7]{32})$/m)![1]!
      expect(made.stdout).toContain(`otpauth://totp/`)
      expect(made.stdout).not.toContain(password)
      const [row] = await world.db.query("SELECT * FROM admins WHERE email = $1", [email])
      expect(row.password_hash).toMatch(/^scrypt\$32768\$8\$1\$/)
      expect(JSON.stringify(row)).not.toContain(password)
      expect(JSON.stringify(row)).not.toContain(totpSecret)
    })

    it("refuses a password under 14 characters and a second administrator with the same email", async () => {
      const weak = await adminCli(["create", "--email", "weak@example.com"], "short-pass\n")
      expect(weak.code).toBe(1)
      expect(weak.stderr).toContain("at least 14 characters")
      const again = await adminCli(["create", "--email", email.toUpperCase()], `${password}\n`)
      expect(again.code).toBe(1)
      expect(again.stderr).toContain("already exists")
    })
  })

  describe("signing in", () => {
    it("email, password and code open an as_ session that reaches admin endpoints and nothing else", async () => {
      const res = await signIn({ email, password, code: code() })
      expect(res.status).toBe(200)
      expect(res.json.session_token).toMatch(/^as_[0-9A-Za-z]{43}$/)
      expect(res.json.admin).toEqual({ id: expect.any(String), email })
      const token = res.json.session_token
      expect((await call(world, "GET", "/admin/me", { token })).json).toEqual({ admin: res.json.admin })

      const boss = await owner(world)
      expectError(await call(world, "GET", "/v1/me", { token }), 401, "unauthenticated")
      expectError(await call(world, "GET", `/v1/orgs/${boss.orgId}/members`, { token }), 401, "unauthenticated")
      expectError(await call(world, "GET", "/v1/agent", { token }), 401, "unauthenticated")

      // Other credentials do not reach admin endpoints.
      expectError(await call(world, "GET", "/admin/me", { token: boss.token }), 401, "unauthenticated")
      expectError(
        await call(world, "GET", "/admin/me", { cookie: `service_session=${boss.token}` }),
        401,
        "unauthenticated"
      )
      const key = await makeOrgKey(world, boss.token, boss.orgId, "write")
      expectError(await call(world, "GET", "/admin/me", { token: key.secret }), 403, "forbidden")

      expect((await call(world, "POST", "/admin/sign-out", { token })).json).toEqual({ status: "signed_out" })
      expectError(await call(world, "GET", "/admin/me", { token }), 401, "unauthenticated")
    })

    it("a password under 14 characters answers 400 weak_password", async () => {
      expectError(await signIn({ email, password: "short", code: "123456" }), 400, "weak_password")
    })

    it("five failures answer 401 invalid_credentials, then the account is locked 15 minutes (429 locked)", async () => {
      const locked = "locked-admin@example.com"
      const secret = (await createAdmin(locked)).totpSecret
      const wrongCode = code(secret) === "000000" ? "111111" : "000000"
      expectError(
        await signIn({ email: locked, password: `${password}x`, code: code(secret) }),
        401,
        "invalid_credentials"
      )
      expectError(await signIn({ email: locked, password, code: wrongCode }), 401, "invalid_credentials")
      expectError(
        await signIn({ email: locked, password: "another wrong password", code: code(secret) }),
        401,
        "invalid_credentials"
      )
      expectError(await signIn({ email: locked, password, code: "" }), 401, "invalid_credentials")
      expectError(await signIn({ email: locked, password, code: wrongCode }), 401, "invalid_credentials")
      const refused = await signIn({ email: locked, password, code: code(secret) })
      expectError(refused, 429, "locked")
      expect(refused.json.error.retryable).toBe(true)
      const retryAfter = Number(refused.headers.get("retry-after"))
      expect(retryAfter).toBeGreaterThan(14 * 60)
      expect(retryAfter).toBeLessThanOrEqual(15 * 60)
      // Fifteen minutes pass.
      await world.db.query("UPDATE admins SET locked_until = now() - interval '1 second' WHERE email = $1", [locked])
      expect((await signIn({ email: locked, password, code: code(secret) })).status).toBe(200)
    })

    it("an unknown email answers 401 invalid_credentials like a wrong password", async () => {
      expectError(await signIn({ email: "nobody@example.com", password, code: "123456" }), 401, "invalid_credentials")
    })

    it("a code works once", async () => {
      const replay = "replay-admin@example.com"
      const secret = (await createAdmin(replay)).totpSecret
      const now = code(secret)
      expect((await signIn({ email: replay, password, code: now })).status).toBe(200)
      expectError(await signIn({ email: replay, password, code: now }), 401, "invalid_credentials")
    })
  })
}
