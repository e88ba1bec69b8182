import { createHash } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { jcs } from "../../src/Services/Receipts/Jcs.js"
import { makeSecretBox } from "../../src/Services/SecretBox/SecretBox.js"
import { emailFindInput, seedBuyer } from "../Purchasing/support.js"
import { seedAdmin } from "../support/fixtures.js"
import { makeShiftableClock } from "../support/shiftableClock.js"
import { call, startWorld, topUp, type World } from "../support/world.js"
import { leavesOf, tampered, verifyWithJose } from "./support.js"

/**
 * Receipts, gateway call records and disputes carry a detached EdDSA JWS over their RFC 8785
 * canonical form; jose checks them against the JWKS the service publishes, and a change to
 * any one field makes the check fail.
 */
let world: World
let admin: { adminId: string; token: string }
const clock = makeShiftableClock()
const SECRETS_KEY = "signed records test key"
const logLines: Array<string> = []

beforeAll(async () => {
  world = await startWorld("signed_records", {
    provider: true,
    clock: clock.layer,
    // Every line down to Debug, to show none of them carries the private key.
    env: { SECRETS_ENCRYPTION_KEY: SECRETS_KEY, LOG_LEVEL: "Debug" },
    logLines: (line) => logLines.push(line)
  })
  admin = await seedAdmin(world.db)
})
afterAll(async () => {
  await world?.close()
})

const sha256 = (value: unknown) => createHash("sha256").update(jcs(value)).digest("hex")

const inputs = [emailFindInput(1), emailFindInput(2, "mock-partial"), emailFindInput(3, "mock-fail")]

const buy = async (key: string) => {
  const answer = await call(world, "POST", "/v1/execute", { token: key, body: { tool: "hunter-email-finder", inputs } })
  expect(answer.status).toBe(200)
  return answer.json.receipt_id as string
}

const receipt = async (key: string, id: string) => {
  const answer = await call(world, "GET", `/v1/receipts/${id}`, { token: key })
  expect(answer.status).toBe(200)
  return answer.json.receipt
}

const rejects = (record: Record<string, unknown>) =>
  verifyWithJose(world.server.url, record).then(() => "verified", (error) => error.code as string)

describe("signed receipts", () => {
  it("verify with jose against the published keys, over every fact of the purchase", async () => {
    const { agent, org } = await seedBuyer(world)
    const id = await buy(agent.key)
    const signed = await receipt(agent.key, id)

    const jwks = await call(world, "GET", "/.well-known/jwks.json")
    expect(jwks.status).toBe(200)
    expect(jwks.json.keys[0]).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig" })
    expect(jwks.json.keys[0]).not.toHaveProperty("d")
    expect(signed.signature).toMatchObject({ alg: "EdDSA", kid: jwks.json.keys[0].kid })
    expect(await verifyWithJose(world.server.url, signed)).toBe(signed.signature.kid)

    // What was agreed and delivered, each under the signature.
    expect(signed).toMatchObject({
      id,
      org_id: org.orgId,
      agent_id: agent.agentId,
      mode: "test",
      tool: { slug: "hunter-email-finder" },
      price_per_item: { credits: expect.any(String) },
      charged: { credits: expect.any(String) },
      refunded: { credits: expect.any(String) },
      created_at: expect.any(String),
      completed_at: expect.any(String)
    })
    expect(signed.items.map((item: any) => item.outcome)).toEqual(["passed", "partial", "failed"])
    signed.items.forEach((item: any, i: number) => {
      expect(item.input_hash).toBe(sha256(inputs[i]))
      expect(item.check).toMatchObject({ id: expect.any(String), version: expect.any(String) })
      expect(item.finished_at).toEqual(expect.any(String))
    })
    expect(signed.items[0].result_hash).toMatch(/^[0-9a-f]{64}$/)

    // The same facts give the same signature, whoever reads them.
    expect((await receipt(agent.key, id)).signature).toEqual(signed.signature)
    const byOwner = await call(world, "GET", `/v1/orgs/${org.orgId}/receipts/${id}`, {
      token: org.owner.sessionToken
    })
    expect(byOwner.json.receipt).toEqual(signed)
  })

  it("fail on a change to any field", async () => {
    const { agent } = await seedBuyer(world)
    const signed = await receipt(agent.key, await buy(agent.key))
    const { signature: _, ...facts } = signed
    const leaves = leavesOf(facts)
    expect(leaves.length).toBeGreaterThan(60)
    for (const leaf of leaves) {
      expect([leaf.path.join("."), await rejects(tampered(signed, leaf.path))]).toEqual([
        leaf.path.join("."),
        "ERR_JWS_SIGNATURE_VERIFICATION_FAILED"
      ])
    }
    // A member added or removed is a change too.
    expect(await rejects({ ...signed, note: "added" })).toBe("ERR_JWS_SIGNATURE_VERIFICATION_FAILED")
    const { idempotency_key: __, ...without } = signed
    expect(await rejects(without)).toBe("ERR_JWS_SIGNATURE_VERIFICATION_FAILED")
  })

  it("still verify after a dispute refunds an item; the dispute is signed on its own, linked to the receipt", async () => {
    const { agent } = await seedBuyer(world)
    const id = await buy(agent.key)
    const before = await receipt(agent.key, id)
    const opened = await call(world, "POST", "/v1/disputes", {
      token: agent.key,
      body: { receipt_id: id, item_index: 0, reason: "bounced" }
    })
    expect(opened.status).toBe(201)
    expect(await verifyWithJose(world.server.url, opened.json.dispute)).toBe(before.signature.kid)
    const decided = await call(world, "POST", `/admin/disputes/${opened.json.dispute.id}/decide`, {
      token: admin.token,
      body: { decision: "upheld", reason: "Address bounced" }
    })
    expect(decided.status).toBe(200)
    expect(decided.json.dispute).toMatchObject({ receipt_id: id, item_index: 0, status: "upheld" })
    expect(await verifyWithJose(world.server.url, decided.json.dispute)).toBe(before.signature.kid)

    const after = await receipt(agent.key, id)
    expect(after.items[0].refund.credits).toBe(after.items[0].cost.credits)
    expect(after.refunded).not.toEqual(before.refunded)
    // Both statements hold: what was true when first read, and what is true now.
    expect(await verifyWithJose(world.server.url, before)).toBe(before.signature.kid)
    expect(await verifyWithJose(world.server.url, after)).toBe(before.signature.kid)
    expect(await rejects({ ...before, refunded: after.refunded })).toBe("ERR_JWS_SIGNATURE_VERIFICATION_FAILED")
  })
})

describe("signed gateway call records", () => {
  it("name the hashes of what was sent and answered, and verify with jose; a change fails", async () => {
    const { agent, org } = await seedBuyer(world, { mode: "live" })
    await topUp(world, org.orgId, 100_000n)
    const request = { endpoint: "fakeprov/echo", body: { name: "Ada", nested: { n: 1 } }, query: { q: "x" } }
    const answered = await call(world, "POST", "/v1/call", { token: agent.key, body: request })
    expect(answered.status).toBe(200)

    const listed = await call(world, "GET", `/v1/orgs/${org.orgId}/calls`, { token: org.owner.sessionToken })
    expect(listed.status).toBe(200)
    const [record] = listed.json.calls
    expect(record).toMatchObject({
      id: answered.json.call_id,
      agent_id: agent.agentId,
      endpoint: "fakeprov/echo",
      mode: "live",
      status: "succeeded",
      price: answered.json.price,
      charged: answered.json.charged,
      request_hash: sha256({ endpoint: "fakeprov/echo", path_params: {}, query: { q: "x" }, body: request.body }),
      response_hash: sha256(answered.json.data)
    })
    expect(await verifyWithJose(world.server.url, record)).toBe(record.signature.kid)
    const { signature: _, ...facts } = record
    for (const leaf of leavesOf(facts)) {
      expect([leaf.path.join("."), await rejects(tampered(record, leaf.path))]).toEqual([
        leaf.path.join("."),
        "ERR_JWS_SIGNATURE_VERIFICATION_FAILED"
      ])
    }
  })

  it("sign a test key's call over the sandbox sample it answered", async () => {
    const { agent, org } = await seedBuyer(world)
    const answered = await call(world, "POST", "/v1/call", { token: agent.key, body: { endpoint: "fakeprov/ok" } })
    expect(answered.status).toBe(200)
    const listed = await call(world, "GET", `/v1/orgs/${org.orgId}/calls`, { token: org.owner.sessionToken })
    const [record] = listed.json.calls
    expect(record).toMatchObject({ status: "test", response_hash: sha256(answered.json.data) })
    expect(await verifyWithJose(world.server.url, record)).toBe(record.signature.kid)
  })
})

describe("signing keys", () => {
  it("are kept sealed, rotate when due, and stay published so older signatures still verify", async () => {
    const { agent } = await seedBuyer(world)
    const id = await buy(agent.key)
    const old = await receipt(agent.key, id)
    const [stored] = await world.db.query(`SELECT kid, private_sealed FROM signing_keys WHERE kid = $1`, [
      old.signature.kid
    ])
    expect(stored.private_sealed).toMatch(/^v1\./)
    expect(stored.private_sealed).not.toContain("\"d\"")
    // Opened with the secret box's key, it is the private half of the published key.
    const privateJwk = JSON.parse(makeSecretBox(SECRETS_KEY).open(stored.private_sealed))
    const jwks = (await call(world, "GET", "/.well-known/jwks.json")).json
    expect(jwks.keys.find((key: any) => key.kid === old.signature.kid).x).toBe(privateJwk.x)
    expect(privateJwk.d).toMatch(/^[\w-]{43}$/)
    expect(logLines.some((line) => line.includes("Receipt signing key made"))).toBe(true)
    expect(logLines.filter((line) => line.includes(privateJwk.d))).toEqual([])

    clock.advance("91 days")
    const rotated = await receipt(agent.key, id)
    expect(rotated.signature.kid).not.toBe(old.signature.kid)
    const { keys } = (await call(world, "GET", "/.well-known/jwks.json")).json
    expect(keys.map((key: any) => key.kid).slice(0, 2)).toEqual([rotated.signature.kid, old.signature.kid])
    expect(await verifyWithJose(world.server.url, old)).toBe(old.signature.kid)
    expect(await verifyWithJose(world.server.url, rotated)).toBe(rotated.signature.kid)
    // A signature does not verify under another published key.
    const swapped = {
      ...old,
      signature: {
        ...old.signature,
        jws: old.signature.jws.replace(
          /^[^.]+/,
          Buffer.from(JSON.stringify({ alg: "EdDSA", kid: rotated.signature.kid })).toString("base64url")
        )
      }
    }
    expect(await rejects(swapped)).toBe("ERR_JWS_SIGNATURE_VERIFICATION_FAILED")
  })
})
