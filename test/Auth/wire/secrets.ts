import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import * as OTPAuth from "otpauth"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Admins } from "../../../src/Services/Auth/Admins.js"
import { sha256Hex } from "../../../src/Services/SecretBox/Hashes.js"
import { freshEmail, freshIp, freshPhone, mailedToken, makeAgent, makeOrgKey } from "../../support/people.js"
import { request } from "../../support/server.js"
import { call, eventually } from "../../support/world.js"
import { idp, serviceLogLines, world } from "./world.js"

/**
 * Secrets never appear in clear in the database or in the logs: every flow that makes or
 * takes a secret runs with logging at its most verbose, then both are searched for each.
 */
const logged: Array<string> = []
const restore: Array<() => void> = []

const capture = () => {
  for (const method of ["log", "info", "warn", "error", "debug", "trace"] as const) {
    const original = console[method]
    console[method] = (...args: Array<unknown>) => {
      logged.push(args.map((arg) => (typeof arg === "string" ? arg : safeJson(arg))).join(" "))
    }
    restore.push(() => (console[method] = original))
  }
  for (const stream of [process.stdout, process.stderr]) {
    const original = stream.write.bind(stream)
    stream.write = ((chunk: unknown, ...rest: Array<any>) => {
      logged.push(String(chunk))
      return original(chunk as any, ...rest)
    }) as typeof stream.write
    restore.push(() => (stream.write = original as typeof stream.write))
  }
}
const safeJson = (value: unknown) => {
  try {
    return value instanceof Error ? `${value.message} ${value.stack}` : JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

export const secretsCases = () => {
  beforeAll(() => {
    capture()
  })
  afterAll(() => {
    restore.forEach((undo) => undo())
  })

  const secrets: Array<{ what: string; value: string }> = []
  const keep = (what: string, value: string) => {
    expect(value.length).toBeGreaterThanOrEqual(6)
    secrets.push({ what, value })
    return value
  }

  describe("secrets in clear", () => {
    it("appear nowhere in the database or the logs after every flow ran", async () => {
      keep("twilio auth token", world.twilio.authToken)
      keep("identity provider client secret", idp.clientSecret)

      // Email sign-in, both verify forms.
      const email = freshEmail("secret")
      let before = world.smtp.messages.length
      await call(world, "POST", "/auth/email/start", { body: { email }, ip: freshIp() })
      const link = keep("sign-in link", await mailedToken(world, email, "/auth/email/verify", before))
      const viaLink = await call(world, "GET", `/auth/email/verify?token=${link}`)
      keep("session (cookie)", viaLink.headers.get("set-cookie")!.match(/service_session=([^;]+)/)![1]!)
      before = world.smtp.messages.length
      await call(world, "POST", "/auth/email/start", { body: { email }, ip: freshIp() })
      const link2 = keep("sign-in link", await mailedToken(world, email, "/auth/email/verify", before))
      const session = keep(
        "session",
        (await call(world, "POST", "/auth/email/verify", { body: { token: link2 } })).json.session_token
      )

      // Phone, org, invitation.
      const phone = freshPhone()
      await call(world, "POST", "/v1/me/phone", { token: session, body: { phone } })
      const code = keep("phone code", world.twilio.lastCode(phone))
      await call(world, "POST", "/v1/me/phone/verify", { token: session, body: { code } })
      const orgId = (await call(world, "POST", "/v1/orgs", { token: session, body: { name: "Secretive" } })).json.org.id
      const invitee = freshEmail("invitee")
      before = world.smtp.messages.length
      await call(world, "POST", `/v1/orgs/${orgId}/invites`, { token: session, body: { email: invitee } })
      keep("invitation", await mailedToken(world, invitee, "/invites/accept", before))

      // Agents and org keys, made, rotated, used.
      const agent = await makeAgent(world, session, orgId)
      keep("agent key", agent.key)
      await call(world, "GET", "/v1/agent", { token: agent.key })
      const rotated = await call(world, "POST", `/v1/orgs/${orgId}/agents/${agent.id}/rotate-key`, { token: session })
      keep("rotated agent key", rotated.json.key)
      await call(world, "GET", "/v1/agent", { token: rotated.json.key })
      await call(world, "GET", "/v1/agent", { token: agent.key })
      const orgKey = await makeOrgKey(world, session, orgId, "write")
      keep("org key", orgKey.secret)
      await call(world, "GET", `/v1/orgs/${orgId}/agents`, { token: orgKey.secret })
      await call(world, "DELETE", `/v1/orgs/${orgId}/keys/${orgKey.id}`, { token: session })
      await call(world, "GET", `/v1/orgs/${orgId}/agents`, { token: orgKey.secret })

      // Identity-provider sign-in.
      idp.nextUser({ email: freshEmail("idp"), email_verified: true })
      const start = await call(world, "GET", "/auth/idp/start")
      const handle = keep(
        "identity-provider handle",
        start.headers.get("set-cookie")!.match(/service_idp=([^;]+)/)![1]!
      )
      const atProvider = await request(start.headers.get("location")!)
      const back = new URL(atProvider.headers.get("location")!)
      const done = await call(world, "GET", `${back.pathname}${back.search}`, { cookie: `service_idp=${handle}` })
      keep("session (identity provider)", done.headers.get("set-cookie")!.match(/service_session=([^;]+)/)![1]!)

      // An administrator: created, signed in (a failure first), signed out.
      const password = keep("admin password", "a very secret admin passphrase")
      const runtime = ManagedRuntime.make(
        Admins.Default.pipe(Layer.provide(PgClient.layer({ url: Redacted.make(world.db.url) })))
      )
      const admin = await runtime.runPromise(
        Effect.flatMap(Admins, (admins) => admins.create("secret-admin@example.com", password))
      )
      await runtime.dispose()
      keep("admin TOTP secret", admin.totpSecret)
      const totp = OTPAuth.TOTP.generate({ secret: OTPAuth.Secret.fromBase32(admin.totpSecret) })
      await call(world, "POST", "/admin/sign-in", {
        body: { email: "secret-admin@example.com", password: `${password}!`, code: totp }
      })
      const adminSignIn = await call(world, "POST", "/admin/sign-in", {
        body: { email: "secret-admin@example.com", password, code: totp }
      })
      const adminSession = keep("admin session", adminSignIn.json.session_token)
      await call(world, "POST", "/admin/sign-out", { token: adminSession })
      await call(world, "POST", "/auth/logout", { token: session })

      // The usage stamps (the agent key's, its address's, the org key's) are written in the
      // background: wait for them to land before reading.
      await eventually(async () => {
        const [stamps] = await world.db.query(
          `SELECT (SELECT key_last_used_at FROM agents WHERE id = $1) IS NOT NULL
            AND EXISTS (SELECT 1 FROM agent_key_addresses WHERE agent_id = $1)
            AND (SELECT last_used_at FROM org_keys WHERE id = $2) IS NOT NULL AS landed`,
          [agent.id, orgKey.id]
        )
        return stamps.landed
      }, { what: "the usage stamps" })

      const tables = await world.db.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
      )
      let dump = ""
      for (const { table_name } of tables) {
        const rows = await world.db.query(`SELECT row_to_json(t)::text AS row FROM "${table_name}" t`)
        dump += rows.map((r: any) => r.row).join("\n") + "\n"
      }
      // The service's own lines, from its start (console and stdout writes of anything else are captured above).
      const logs = [...serviceLogLines, ...logged].join("\n")

      const appears = (haystack: string, value: string) =>
        /^\d+$/.test(value)
          ? new RegExp(`(?<![0-9A-Za-z])${value}(?![0-9A-Za-z])`).test(haystack)
          : haystack.includes(value)
      const leaks = secrets.flatMap(({ value, what }) => [
        ...(appears(dump, value) ? [`${what} in the database`] : []),
        ...(appears(logs, value) ? [`${what} in the logs`] : [])
      ])
      expect(leaks).toEqual([])
      // The searches can find things: the hashes are there, and the log was captured.
      expect(dump).toContain(sha256Hex(session))
      expect(dump).toContain(sha256Hex(rotated.json.key))
      expect(logs).toContain("Service ready at")
    })
  })
}
