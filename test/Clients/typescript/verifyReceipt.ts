import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import {
  AgentGateway,
  canonicalJson,
  clientLayer,
  makeAgentGateway,
  ReceiptVerificationError,
  verifyReceipt
} from "../../../clients/typescript/src/index.js"
import { jcs } from "../../../src/Services/Receipts/Jcs.js"
import { emailFindInput, seedBuyer } from "../../Purchasing/support.js"
import { leavesOf, tampered } from "../../Receipts/support.js"
import { seedOrgKey } from "../../support/fixtures.js"
import { call } from "../../support/world.js"
import { world } from "./world.js"

/** The TypeScript client's `verifyReceipt` against the service's signed records and published keys. */
export const verifyReceiptCases = () => {
  const signedReceipt = async () => {
    const { agent } = await seedBuyer(world)
    const bought = await call(world, "POST", "/v1/execute", {
      token: agent.key,
      body: { tool: "hunter-email-finder", inputs: [emailFindInput(1), emailFindInput(2, "mock-partial")] }
    })
    expect(bought.status).toBe(200)
    return (await call(world, "GET", `/v1/receipts/${bought.json.receipt_id}`, { token: agent.key })).json.receipt
  }

  const reasonOf = (promise: Promise<unknown>) =>
    promise.then(
      () => "verified",
      (error) => (error instanceof ReceiptVerificationError ? error.reason : `unexpected ${String(error)}`)
    )

  const withHeaderKid = (record: any, kid: string) => {
    const [, , sig] = record.signature.jws.split(".")
    const header = Buffer.from(JSON.stringify({ alg: "EdDSA", kid })).toString("base64url")
    return { ...record, signature: { ...record.signature, kid, jws: `${header}..${sig}` } }
  }

  describe("verifyReceipt (TypeScript client)", () => {
    it("verifies a receipt with the keys fetched from the service, or given", async () => {
      const receipt = await signedReceipt()
      const verified = await verifyReceipt(receipt, { baseUrl: world.server.url })
      expect(verified.kid).toBe(receipt.signature.kid)
      const jwks = (await call(world, "GET", "/.well-known/jwks.json")).json
      expect((await verifyReceipt(receipt, { jwks })).kid).toBe(receipt.signature.kid)
    })

    it("refuses a tampered receipt, a wrong key id, an unknown key and an unsigned record, each with its reason", async () => {
      const receipt = await signedReceipt()
      const options = { baseUrl: world.server.url }
      const { signature: _, ...facts } = receipt
      for (const leaf of leavesOf(facts)) {
        expect([leaf.path.join("."), await reasonOf(verifyReceipt(tampered(receipt, leaf.path), options))]).toEqual([
          leaf.path.join("."),
          "signature_mismatch"
        ])
      }
      // The key id beside the JWS is not the one it was signed with.
      expect(await reasonOf(verifyReceipt({ ...receipt, signature: { ...receipt.signature, kid: "other" } }, options)))
        .toBe("kid_mismatch")
      expect(await reasonOf(verifyReceipt(withHeaderKid(receipt, "no-such-key"), options))).toBe("unknown_key")
      expect(await reasonOf(verifyReceipt({ ...receipt, signature: undefined }, options))).toBe("unsigned")
      expect(await reasonOf(verifyReceipt({ ...receipt, signature: { ...receipt.signature, jws: "abc" } }, options)))
        .toBe("malformed_signature")
      const error = await verifyReceipt(withHeaderKid(receipt, "no-such-key"), options).catch((e) => e)
      expect(error.message).toBe("The service publishes no key no-such-key")
    })

    it("verifies what the client answers (credits as bigint, Dates), the service's JSON and the `{receipt}` answer alike", async () => {
      const { org, agent } = await seedBuyer(world)
      const gateway = new AgentGateway({ apiKey: agent.key, baseUrl: world.server.url })
      const options = { baseUrl: world.server.url }
      const bought = await gateway.execute({ tool: "hunter-email-finder", inputs: [emailFindInput(1)] })
      if (bought.status !== "done") throw new Error("one input answers at once")
      const receipt = await gateway.receipt(bought.receipt_id)
      expect(typeof receipt.charged_credits).toBe("bigint")
      expect(receipt.created_at).toBeInstanceOf(Date)
      const answer = (await call(world, "GET", `/v1/receipts/${bought.receipt_id}`, { token: agent.key })).json
      for (const record of [receipt, answer.receipt, answer]) {
        expect((await verifyReceipt(record, options)).kid).toBe(answer.receipt.signature.kid)
      }

      // A decoded record changed, or given a member the service did not sign, no longer verifies.
      expect(await reasonOf(verifyReceipt({ ...receipt, charged_credits: receipt.charged_credits + 1n }, options)))
        .toBe("signature_mismatch")
      expect(await reasonOf(verifyReceipt({ ...receipt, created_at: new Date(0) }, options))).toBe("signature_mismatch")
      expect(await reasonOf(verifyReceipt({ ...receipt, note: "added" }, options))).toBe("signature_mismatch")
      expect(await reasonOf(verifyReceipt({ receipt: { ...answer.receipt, mode: "live" } }, options)))
        .toBe("signature_mismatch")

      // A dispute and a gateway call record, decoded by the client, verify the same way.
      const dispute = await gateway.openDispute({ receipt_id: bought.receipt_id, item_index: 0, reason: "bounced" })
      expect(typeof dispute.item_cost).toBe("bigint")
      expect((await verifyReceipt(dispute, options)).kid).toBe(dispute.signature.kid)
      await gateway.call({
        endpoint: "hunter/email-finder",
        query: { domain: "example.com", first_name: "Ada", last_name: "Lovelace" }
      })
      const orgKey = (await seedOrgKey(world.db, org.orgId, org.owner, "read")).secret
      const { calls } = await Effect.runPromise(
        Effect.flatMap(
          makeAgentGateway({ apiKey: orgKey, baseUrl: world.server.url }),
          (scripts) =>
            scripts.run((api) => api.gatewayCalls.list({ path: { orgId: org.orgId }, urlParams: { limit: 10 } }))
        ).pipe(Effect.provide(clientLayer))
      )
      expect(calls).toHaveLength(1)
      expect(typeof calls[0]!.price_credits).toBe("bigint")
      expect((await verifyReceipt(calls[0]!, options)).kid).toBe(calls[0]!.signature.kid)
      expect(await reasonOf(verifyReceipt({ ...calls[0]!, charged_credits: 1n }, options))).toBe("signature_mismatch")
    })

    it("canonicalises exactly as the service does", () => {
      const samples = [
        { b: [3, { d: 1, c: 2 }], a: -0, s: "\u20ac$\u000f\nA'B\"\\/", "\ud83d\ude00": 1, "\ufb33": 2, n: 1e30 },
        { numbers: [333333333.33333329, 4.5, 0.002, 1e-27], literals: [null, true, false] }
      ]
      for (const sample of samples) expect(canonicalJson(sample)).toBe(jcs(sample))
    })
  })
}
