import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, Schema, TestContext } from "effect"
import { createHash } from "node:crypto"
import type { AuthenticatedAgent } from "../../src/Domain/Current.js"
import { SignedDispute } from "../../src/Domain/Dispute.js"
import type { CallRequest } from "../../src/Domain/GatewayCall.js"
import { AdminId, DisputeId, OrgId, ReceiptId } from "../../src/Domain/Ids.js"
import { ExecuteRequest, Receipt } from "../../src/Domain/Purchasing.js"
import { CallRecord } from "../../src/Http/Groups/GatewayGroup.js"
import { CallLog } from "../../src/Services/Gateway/CallLog.js"
import { Gateway } from "../../src/Services/Gateway/Gateway.js"
import { Ledger } from "../../src/Services/Ledger/Ledger.js"
import { Disputes } from "../../src/Services/Purchasing/Disputes.js"
import { Execute } from "../../src/Services/Purchasing/Execute.js"
import { Receipts } from "../../src/Services/Purchasing/Receipts.js"
import { jcs } from "../../src/Services/Receipts/Jcs.js"
import { SigningKeys } from "../../src/Services/Receipts/SigningKeys.js"
import { makeSecretBox } from "../../src/Services/SecretBox/SecretBox.js"
import { emailFindInput, seedBuyer } from "../Purchasing/support.js"
import { agentOf, seedAdmin } from "../support/fixtures.js"
import { makeShiftableClock } from "../support/shiftableClock.js"
import { gatewayTier, inShiftedTime, onRealClock, PurchasingServices, SuiteDatabase } from "../support/testLayers.js"
import { leavesOf, tampered, verifyWithKeys } from "./support.js"

/**
 * Receipts, gateway call records and disputes carry a detached EdDSA JWS over their RFC 8785
 * canonical form; jose checks them against the keys the service publishes, and a change to
 * any one field makes the check fail. On the services that sign them, without HTTP: a record
 * is read as its route answers it (the service's answer in its wire encoding) and the keys as
 * `/.well-known/jwks.json` publishes them (`SigningKeys.published`); that the routes answer
 * the same, and a record fetched over HTTP verifies against the keys fetched over HTTP, is
 * the wire suites' (`Purchasing/execute.test.ts`, `Gateway/gateway.test.ts`,
 * `Http/wire/signingKeys.ts`).
 */
const SECRETS_KEY = "signed records test key"
const clock = makeShiftableClock()
const logLines: Array<string> = []

/** Purchases, disputes, gateway calls (with the fake provider) and the signing keys, on the suite's database. */
const services = Layer.provideMerge(
  Layer.mergeAll(onRealClock(PurchasingServices), SigningKeys.Default),
  gatewayTier("signed_records", { SECRETS_ENCRYPTION_KEY: SECRETS_KEY })
).pipe(Layer.provideMerge(TestContext.TestContext))

/** The service's log lines (its text format), down to Debug, into `logLines`. */
const intoLogLines = Logger.replace(
  Logger.defaultLogger,
  Logger.make((options) => {
    logLines.push(Logger.stringLogger.log(options))
  })
)

/**
 * A test's effect as the service runs it: on a clock the test moves forward (the real time
 * plus an offset), every log line down to Debug into `logLines`, to show none carries the
 * private key.
 */
const signing = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  inShiftedTime(clock)(effect).pipe(Effect.provide(intoLogLines), Logger.withMinimumLogLevel(LogLevel.Debug))

const sha256 = (value: unknown) => createHash("sha256").update(jcs(value)).digest("hex")

const inputs = [emailFindInput(1), emailFindInput(2, "mock-partial"), emailFindInput(3, "mock-fail")]

/** A buyer (an org and its agent) and the agent as its key's check reads it. */
const buyer = (options: Parameters<typeof seedBuyer>[1] = {}) =>
  Effect.gen(function*() {
    const db = yield* SuiteDatabase
    const seeded = yield* Effect.promise(() => seedBuyer({ db }, options))
    return { ...seeded, current: yield* Effect.promise(() => agentOf(db, seeded.agent.agentId)) }
  })

/** A purchase of `inputs` (one passes, one is partial, one fails): its receipt's id. */
const buy = (agent: AuthenticatedAgent) =>
  Effect.gen(function*() {
    const request = yield* Effect.orDie(Schema.decodeUnknown(ExecuteRequest)({ tool: "hunter-email-finder", inputs }))
    const answer = yield* Effect.orDie(Effect.flatMap(Execute, (execute) => execute.execute(agent, request, "")))
    const receiptId = "receipt_id" in answer && !("job_id" in answer) ? answer.receipt_id : undefined
    if (typeof receiptId !== "string") throw new Error(`expected a result, got ${JSON.stringify(answer)}`)
    return receiptId
  })

/** The receipt as `GET /v1/receipts/{id}` answers it: signed, in its wire encoding. */
const receiptOf = (orgId: string, id: string) =>
  Effect.flatMap(Receipts, (receipts) => receipts.get(OrgId.make(orgId), ReceiptId.make(id))).pipe(
    Effect.flatMap(Schema.encode(Receipt)),
    Effect.orDie
  )

/** The keys as `GET /.well-known/jwks.json` publishes them. */
const jwks = Effect.map(Effect.flatMap(SigningKeys, (keys) => keys.published), (keys) => ({ keys: [...keys] }))

/** "verified", or the code of jose's error. */
const rejects = (record: Record<string, unknown>) =>
  Effect.flatMap(
    jwks,
    (keys) => Effect.promise(() => verifyWithKeys(keys, record).then(() => "verified", (error) => error.code as string))
  )

const verify = (record: Record<string, unknown>) =>
  Effect.flatMap(jwks, (keys) => Effect.promise(() => verifyWithKeys(keys, record)))

/** The org's calls as `GET /v1/orgs/{org}/calls` answers them: signed, in their wire encoding. */
const callsOf = (orgId: string) =>
  Effect.flatMap(CallLog, (log) => log.list(orgId, 50, undefined)).pipe(
    Effect.flatMap(({ calls }) => Schema.encode(Schema.Array(CallRecord))(calls)),
    Effect.orDie
  )

layer(services, { timeout: 60_000 })("signed records", (it) => {
  describe("signed receipts", () => {
    it.effect("verify with jose against the published keys, over every fact of the purchase", () =>
      signing(Effect.gen(function*() {
        const { agent, current, org } = yield* buyer()
        const id = yield* buy(current)
        const signed = yield* receiptOf(org.orgId, id)

        const published = yield* jwks
        expect(published.keys[0]).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig" })
        expect(published.keys[0]).not.toHaveProperty("d")
        expect(signed.signature).toMatchObject({ alg: "EdDSA", kid: published.keys[0]!.kid })
        expect(yield* verify(signed)).toBe(signed.signature.kid)

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
        expect(signed.items.map((item) => item.outcome)).toEqual(["passed", "partial", "failed"])
        signed.items.forEach((item, i) => {
          expect(item.input_hash).toBe(sha256(inputs[i]))
          expect(item.check).toMatchObject({ id: expect.any(String), version: expect.any(String) })
          expect(item.finished_at).toEqual(expect.any(String))
        })
        expect(signed.items[0]!.result_hash).toMatch(/^[0-9a-f]{64}$/)

        // The same facts give the same signature, whoever reads them (the agent's route and the
        // org's members' route read the org's receipt).
        expect((yield* receiptOf(org.orgId, id)).signature).toEqual(signed.signature)
        expect(yield* receiptOf(org.orgId, id)).toEqual(signed)
      })))

    it.effect("fail on a change to any field", () =>
      signing(Effect.gen(function*() {
        const { current, org } = yield* buyer()
        const signed = yield* receiptOf(org.orgId, yield* buy(current))
        const { signature: _, ...facts } = signed
        const leaves = leavesOf(facts)
        expect(leaves.length).toBeGreaterThan(60)
        for (const leaf of leaves) {
          expect([leaf.path.join("."), yield* rejects(tampered(signed, leaf.path))]).toEqual([
            leaf.path.join("."),
            "ERR_JWS_SIGNATURE_VERIFICATION_FAILED"
          ])
        }
        // A member added or removed is a change too.
        expect(yield* rejects({ ...signed, note: "added" })).toBe("ERR_JWS_SIGNATURE_VERIFICATION_FAILED")
        const { idempotency_key: __, ...without } = signed
        expect(yield* rejects(without)).toBe("ERR_JWS_SIGNATURE_VERIFICATION_FAILED")
      })))

    it.effect(
      "still verify after a dispute refunds an item; the dispute is signed on its own, linked to the receipt",
      () =>
        signing(Effect.gen(function*() {
          const db = yield* SuiteDatabase
          const disputes = yield* Disputes
          const { current, org } = yield* buyer()
          const id = yield* buy(current)
          const before = yield* receiptOf(org.orgId, id)
          const opened = yield* disputes.open(current, {
            receipt_id: ReceiptId.make(id),
            item_index: 0,
            reason: "bounced"
          })
            .pipe(Effect.flatMap(Schema.encode(SignedDispute)), Effect.orDie)
          expect(yield* verify(opened)).toBe(before.signature.kid)
          const seeded = yield* Effect.promise(() => seedAdmin(db))
          const admin = { admin_id: AdminId.make(seeded.adminId), email: "admin@example.com", session_id: "session" }
          const decided = yield* disputes.decide(admin, DisputeId.make(opened.id), "upheld", "Address bounced").pipe(
            Effect.flatMap(Schema.encode(SignedDispute)),
            Effect.orDie
          )
          expect(decided).toMatchObject({ receipt_id: id, item_index: 0, status: "upheld" })
          expect(yield* verify(decided)).toBe(before.signature.kid)

          const after = yield* receiptOf(org.orgId, id)
          const [refunded] = after.items as ReadonlyArray<any>
          expect(refunded.refund.credits).toBe(refunded.cost.credits)
          expect(after.refunded).not.toEqual(before.refunded)
          // Both statements hold: what was true when first read, and what is true now.
          expect(yield* verify(before)).toBe(before.signature.kid)
          expect(yield* verify(after)).toBe(before.signature.kid)
          expect(yield* rejects({ ...before, refunded: after.refunded })).toBe("ERR_JWS_SIGNATURE_VERIFICATION_FAILED")
        }))
    )
  })

  describe("signed gateway call records", () => {
    it.effect("name the hashes of what was sent and answered, and verify with jose; a change fails", () =>
      signing(Effect.gen(function*() {
        const { agent, current, org } = yield* buyer({ mode: "live" })
        yield* (yield* Ledger).credit(org.orgId, 100_000n, "top_up", "test top-up")
        const request: CallRequest = {
          endpoint: "fakeprov/echo",
          body: { name: "Ada", nested: { n: 1 } },
          query: { q: "x" }
        }
        const answered = yield* (yield* Gateway).call(current, request)
        expect(answered.status).toBe("succeeded")

        const [record] = yield* callsOf(org.orgId)
        expect(record).toMatchObject({
          id: answered.call_id,
          agent_id: agent.agentId,
          endpoint: "fakeprov/echo",
          mode: "live",
          status: "succeeded",
          price: answered.price,
          charged: answered.charged,
          request_hash: sha256({ endpoint: "fakeprov/echo", path_params: {}, query: { q: "x" }, body: request.body }),
          response_hash: sha256(answered.data)
        })
        expect(yield* verify(record!)).toBe(record!.signature.kid)
        const { signature: _, ...facts } = record!
        for (const leaf of leavesOf(facts)) {
          expect([leaf.path.join("."), yield* rejects(tampered(record!, leaf.path))]).toEqual([
            leaf.path.join("."),
            "ERR_JWS_SIGNATURE_VERIFICATION_FAILED"
          ])
        }
      })))

    it.effect("sign a test key's call over the sandbox sample it answered", () =>
      signing(Effect.gen(function*() {
        const { current, org } = yield* buyer()
        const answered = yield* (yield* Gateway).call(current, { endpoint: "fakeprov/ok" })
        expect(answered.status).toBe("test")
        const [record] = yield* callsOf(org.orgId)
        expect(record).toMatchObject({ status: "test", response_hash: sha256(answered.data) })
        expect(yield* verify(record!)).toBe(record!.signature.kid)
      })))
  })

  describe("signing keys", () => {
    it.effect("are kept sealed, rotate when due, and stay published so older signatures still verify", () =>
      signing(Effect.gen(function*() {
        const db = yield* SuiteDatabase
        const { current, org } = yield* buyer()
        const id = yield* buy(current)
        const old = yield* receiptOf(org.orgId, id)
        const [stored] = yield* Effect.promise(() =>
          db.query(`SELECT kid, private_sealed FROM signing_keys WHERE kid = $1`, [old.signature.kid])
        )
        expect(stored.private_sealed).toMatch(/^v1\./)
        expect(stored.private_sealed).not.toContain("\"d\"")
        // Opened with the secret box's key, it is the private half of the published key.
        const privateJwk = JSON.parse(makeSecretBox(SECRETS_KEY).open(stored.private_sealed))
        const published = yield* jwks
        expect(published.keys.find((key) => key.kid === old.signature.kid)!.x).toBe(privateJwk.x)
        expect(privateJwk.d).toMatch(/^[\w-]{43}$/)
        expect(logLines.some((line) => line.includes("Receipt signing key made"))).toBe(true)
        expect(logLines.filter((line) => line.includes(privateJwk.d))).toEqual([])

        clock.advance("91 days")
        const rotated = yield* receiptOf(org.orgId, id)
        expect(rotated.signature.kid).not.toBe(old.signature.kid)
        const { keys } = yield* jwks
        expect(keys.map((key) => key.kid).slice(0, 2)).toEqual([rotated.signature.kid, old.signature.kid])
        expect(yield* verify(old)).toBe(old.signature.kid)
        expect(yield* verify(rotated)).toBe(rotated.signature.kid)
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
        expect(yield* rejects(swapped)).toBe("ERR_JWS_SIGNATURE_VERIFICATION_FAILED")
        // After rotation too, no line carries a private key.
        expect(logLines.filter((line) => line.includes(privateJwk.d))).toEqual([])
      })))
  })
})
