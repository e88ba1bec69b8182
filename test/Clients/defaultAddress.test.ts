import { ConfigProvider, Effect, Layer, Option } from "effect"
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { afterEach, describe, expect, it, vi } from "vitest"
import {
  AgentGateway,
  DEFAULT_BASE_URL,
  ReceiptVerificationError,
  resolveOptions,
  verifyReceipt
} from "../../clients/typescript/src/index.js"
import { AppConfig } from "../../src/Services/AppConfig.js"

/**
 * Where the clients go when told nowhere (docs/decisions.md, "Installing the clients"): with
 * neither an address given nor SERVICE_API_URL set, the TypeScript client, its bridge and
 * receipt verifier, and the Python client and verifier all call the address the service
 * serves with nothing configured.
 */
const pythonDir = new URL("../../clients/python/", import.meta.url).pathname

/** The service's settings when nothing is configured. */
const unconfigured = Effect.runSync(
  AppConfig.pipe(
    Effect.provide(AppConfig.Default.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map())))))
  )
)
/** Its BASE_URL then: none is set, so the listening address on PORT's default (`PublicUrl`). */
const serviceDefault = `http://localhost:${unconfigured.port}`

/** A record signed in form only: enough for a verifier to go looking for the key. */
const header = Buffer.from(JSON.stringify({ alg: "EdDSA", kid: "some-key" })).toString("base64url")
const signedInForm = { id: "r1", signature: { alg: "EdDSA", kid: "some-key", jws: `${header}..c2ln` } }

const withoutServiceUrl = async <A>(body: () => Promise<A>): Promise<A> => {
  const saved = process.env["SERVICE_API_URL"]
  delete process.env["SERVICE_API_URL"]
  try {
    return await body()
  } finally {
    if (saved !== undefined) process.env["SERVICE_API_URL"] = saved
  }
}

afterEach(() => {
  vi.unstubAllGlobals()
})

describe("the clients' default address", () => {
  it("is the service's own with nothing configured", () => {
    expect(Option.isNone(unconfigured.baseUrl)).toBe(true)
    expect(DEFAULT_BASE_URL).toBe(serviceDefault)
  })

  it("is where the TypeScript client, its bridge's options and verifyReceipt go", async () => {
    const asked: Array<string> = []
    vi.stubGlobal("fetch", async (input: string | URL | Request) => {
      asked.push(input instanceof Request ? input.url : String(input))
      return new Response(JSON.stringify({ keys: [] }), { headers: { "content-type": "application/json" } })
    })
    await withoutServiceUrl(async () => {
      expect(resolveOptions({ apiKey: "sk_test_k" }).baseUrl).toBe(serviceDefault)
      await new AgentGateway({ apiKey: "sk_test_k", maxRetries: 0 }).agent().catch(() => undefined)
      const refused = await verifyReceipt(signedInForm).catch((error) => error)
      expect(refused).toBeInstanceOf(ReceiptVerificationError)
      expect(refused.reason).toBe("unknown_key")
    })
    expect(asked).toEqual([`${serviceDefault}/v1/agent`, `${serviceDefault}/.well-known/jwks.json`])
  })

  it("is where the Python client and verify_receipt go", async () => {
    const probe = `
import json, sys
from unittest import mock
import agent_gateway
from agent_gateway import receipts
asked = []
def fetch_keys(url, timeout):
    asked.append(url)
    return []
with mock.patch.object(receipts, "_fetch_keys", fetch_keys):
    try:
        agent_gateway.verify_receipt(json.loads(sys.argv[1]))
    except agent_gateway.ReceiptVerificationError as error:
        asked.append(error.reason)
print(json.dumps({"default": agent_gateway.DEFAULT_BASE_URL, "client": agent_gateway.Client(api_key="k")._base, "asked": asked}))
`
    const { stdout } = await promisify(execFile)("python3", ["-c", probe, JSON.stringify(signedInForm)], {
      cwd: pythonDir,
      env: { PATH: process.env["PATH"] ?? "" }
    })
    expect(JSON.parse(stdout)).toEqual({
      default: serviceDefault,
      client: serviceDefault,
      asked: [`${serviceDefault}/.well-known/jwks.json`, "unknown_key"]
    })
  })
})
