import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { Admins } from "../../src/Services/Auth/Admins.js"
import { linkIn } from "./smtp.js"
import { call, type World } from "./world.js"

/**
 * People and what they do through the real flows (a world with `smtp` and `twilio`):
 * sign in by email, verify a phone, own an org, join one, make org keys and agents.
 */
let addressCounter = 0
/** A fresh documentation-range address (never contacted: it only travels in X-Forwarded-For). */
export const freshIp = () => {
  addressCounter += 1
  return `198.18.${Math.floor(addressCounter / 250) % 250}.${(addressCounter % 250) + 1}`
}

let emailCounter = 0
export const freshEmail = (tag = "person") => `${tag}-${process.pid}-${++emailCounter}@example.com`

/** The token of the newest sign-in link mailed to `email`. */
export const mailedToken = async (world: World, email: string, needle = "/auth/email/verify", after = 0) => {
  const mail = await world.smtp.waitFor(
    email,
    (m) => world.smtp.messages.indexOf(m) >= after && m.text.includes(needle)
  )
  return new URL(linkIn(mail, needle)).searchParams.get("token")!
}

/** Signs a person in through the real email flow; answers the session token and user id. */
export const signIn = async (world: World, email = freshEmail()) => {
  const before = world.smtp.messages.length
  const start = await call(world, "POST", "/auth/email/start", { body: { email }, ip: freshIp() })
  if (start.status !== 202) throw new Error(`sign-in start answered ${start.status}: ${start.text}`)
  const token = await mailedToken(world, email, "/auth/email/verify", before)
  const verify = await call(world, "POST", "/auth/email/verify", { body: { token } })
  if (verify.status !== 200) throw new Error(`verify answered ${verify.status}: ${verify.text}`)
  return { email, token: verify.json.session_token as string, userId: verify.json.user_id as string }
}

let phoneCounter = 0
export const freshPhone = () => `+1555${process.pid % 1000}${(++phoneCounter).toString().padStart(4, "0")}`

/** Verifies a phone through the real SMS flow. */
export const verifyPhone = async (world: World, session: string, phone = freshPhone()) => {
  const start = await call(world, "POST", "/v1/me/phone", { token: session, body: { phone } })
  if (start.status !== 202) throw new Error(`phone start answered ${start.status}: ${start.text}`)
  const verify = await call(world, "POST", "/v1/me/phone/verify", {
    token: session,
    body: { code: world.twilio.lastCode(phone) }
  })
  if (verify.status !== 200) throw new Error(`phone verify answered ${verify.status}: ${verify.text}`)
  return phone
}

/** A signed-in person with a verified phone and a new org they own. */
export const owner = async (world: World, orgName = "Acme") => {
  const person = await signIn(world)
  await verifyPhone(world, person.token)
  const created = await call(world, "POST", "/v1/orgs", { token: person.token, body: { name: orgName } })
  if (created.status !== 201) throw new Error(`org create answered ${created.status}: ${created.text}`)
  return { ...person, orgId: created.json.org.id as string }
}

/** Invites `email` into an org and has them accept (signing them in first). */
export const joinAs = async (world: World, ownerToken: string, orgId: string, role: "owner" | "member" = "member") => {
  const person = await signIn(world)
  const before = world.smtp.messages.length
  const invited = await call(world, "POST", `/v1/orgs/${orgId}/invites`, {
    token: ownerToken,
    body: { email: person.email, role }
  })
  if (invited.status !== 201) throw new Error(`invite answered ${invited.status}: ${invited.text}`)
  const token = await mailedToken(world, person.email, "/invites/accept", before)
  const accepted = await call(world, "POST", "/auth/invites/accept", { token: person.token, body: { token } })
  if (accepted.status !== 200) throw new Error(`accept answered ${accepted.status}: ${accepted.text}`)
  return person
}

/** An org key made through the API by a signed-in owner. */
export const makeOrgKey = async (world: World, ownerToken: string, orgId: string, scope: "read" | "write") => {
  const made = await call(world, "POST", `/v1/orgs/${orgId}/keys`, {
    token: ownerToken,
    body: { name: `${scope} key`, scope }
  })
  if (made.status !== 201) throw new Error(`org key answered ${made.status}: ${made.text}`)
  return { id: made.json.key.id as string, secret: made.json.secret as string }
}

/** An agent made through the API. */
export const makeAgent = async (world: World, token: string, orgId: string, body: Record<string, unknown> = {}) => {
  const made = await call(world, "POST", `/v1/orgs/${orgId}/agents`, { token, body: { name: "Agent", ...body } })
  if (made.status !== 201) throw new Error(`agent answered ${made.status}: ${made.text}`)
  return { id: made.json.agent.id as string, key: made.json.key as string, agent: made.json.agent }
}

/** The body every error has; `doc_url` is checked by shape. */
export const expectError = (
  response: { status: number; json: any },
  status: number,
  code: string,
  message?: string
) => {
  const problems: Array<string> = []
  if (response.status !== status) problems.push(`status ${response.status} (expected ${status})`)
  if (response.json?.error?.code !== code) problems.push(`code ${response.json?.error?.code} (expected ${code})`)
  if (message !== undefined && response.json?.error?.message !== message) {
    problems.push(`message ${JSON.stringify(response.json?.error?.message)} (expected ${JSON.stringify(message)})`)
  }
  if (
    typeof response.json?.error?.doc_url !== "string" || !response.json.error.doc_url.endsWith(`/docs/errors#${code}`)
  ) {
    problems.push("doc_url")
  }
  if (typeof response.json?.error?.retryable !== "boolean") problems.push("retryable")
  if (problems.length > 0) {
    throw new Error(`Unexpected answer: ${problems.join(", ")}; body ${JSON.stringify(response.json)}`)
  }
}

/** An administrator made by the same service the admin command uses (answers its TOTP secret). */
export const createAdmin = async (world: World, email: string, password: string) => {
  const runtime = ManagedRuntime.make(
    Admins.Default.pipe(Layer.provide(PgClient.layer({ url: Redacted.make(world.db.url) })))
  )
  try {
    return await runtime.runPromise(Effect.flatMap(Admins, (admins) => admins.create(email, password)))
  } finally {
    await runtime.dispose()
  }
}
