import { x402Facilitator } from "@x402/core/facilitator"
import type { Network, PaymentPayload, PaymentRequirements } from "@x402/core/types"
import { findDefaultAsset, getDefaultAsset } from "@x402/evm"
import { ExactEvmScheme } from "@x402/evm/exact/facilitator"
import { UptoEvmScheme } from "@x402/evm/upto/facilitator"
import * as http from "node:http"
import { getAddress, maxUint256 } from "viem"
import { type Chain, makeChain, type Settlement, type TokenInfo } from "./chain.js"
import { type Address, permit2Address } from "./contracts.js"
import { emulatedSigner } from "./signer.js"
import { EMULATOR_FACILITATOR_ADDRESS, testWallet } from "./testWallet.js"

/** Base Sepolia, the x402 test network. */
export const DEFAULT_NETWORK = "eip155:84532"

/** What the test wallet holds when the emulator starts: 1,000 USDC (6 decimals). */
export const DEFAULT_TEST_WALLET_FUNDING = 1_000_000_000n

export interface FacilitatorEmulatorOptions {
  /** Loopback port to listen on (default 0: any free one). */
  readonly port?: number
  /** The network served, as CAIP-2 (default Base Sepolia, `eip155:84532`). */
  readonly network?: string
  /** The token's address (default the network's USDC as `@x402/evm` knows it). */
  readonly asset?: Address
  /** The token's EIP-712 name and version (default what `@x402/evm` knows for the asset, else "USD Coin", "2"). */
  readonly assetName?: string
  readonly assetVersion?: string
  /** Accounts funded at start, in the asset's atomic units (default: the test wallet with 1,000 USDC). */
  readonly funding?: ReadonlyArray<{ readonly address: Address; readonly amountAtomic: bigint }>
}

/** A request the emulator received, for tests to count verifications and settlements. */
export interface ReceivedRequest {
  readonly path: string
  readonly body: unknown
  readonly at: Date
}

export type Trouble = "500" | "hang"

export interface FacilitatorEmulator {
  /** The base URL to give `HTTPFacilitatorClient` (`{ url }`). */
  readonly url: string
  readonly network: string
  readonly asset: TokenInfo
  /** The facilitator's account: sends settlements, and is the one an `upto` authorisation names. */
  readonly facilitatorAddress: Address
  /**
   * Credits `address` with `amountAtomic` of the asset, and (if it has none yet) approves Permit2
   * without limit for it, as a wallet does once before its first Permit2 payment.
   */
  fund(address: Address, amountAtomic: bigint): void
  /** Sets what Permit2 may move from `owner` (0 to make a Permit2 payment fail for want of approval). */
  setPermit2Allowance(owner: Address, amountAtomic: bigint): void
  balanceOf(address: Address): bigint
  /** The transfers settlements made, oldest first. */
  settlements(): ReadonlyArray<Settlement>
  /** Every request received, oldest first. */
  requests(): ReadonlyArray<ReceivedRequest>
  /** The next request to `path` ("/verify", "/settle") answers 500 or is never answered. */
  trouble(path: "/verify" | "/settle", mode: Trouble): void
  close(): Promise<void>
}

const tokenFor = (options: FacilitatorEmulatorOptions, network: Network): TokenInfo => {
  if (options.asset === undefined) {
    const known = getDefaultAsset(network)
    return {
      address: getAddress(known.asset),
      name: options.assetName ?? known.name,
      version: options.assetVersion ?? known.version,
      decimals: known.decimals
    }
  }
  const known = findDefaultAsset(options.asset, network)
  return {
    address: getAddress(options.asset),
    name: options.assetName ?? known?.name ?? "USD Coin",
    version: options.assetVersion ?? known?.version ?? "2",
    decimals: known?.decimals ?? 6
  }
}

/**
 * What the facilitator threw instead of answering, as a refusal in the words of the x402
 * specification: a kind it does not serve, or a payload its scheme could not read (a field
 * missing or of the wrong type), which no chain would accept either.
 */
const refusalOf = (error: unknown, requirements: PaymentRequirements, network: string) => {
  const message = error instanceof Error ? error.message : String(error)
  if (message.includes("x402 version")) return { reason: "invalid_x402_version", message }
  if (message.includes("No facilitator registered for scheme")) {
    return { reason: requirements.network !== network ? "invalid_network" : "unsupported_scheme", message }
  }
  return { reason: "invalid_payload", message }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

/**
 * Starts an x402 v2 facilitator on loopback: `POST /verify`, `POST /settle` and `GET /supported`
 * as `HTTPFacilitatorClient` speaks them, answered by the real `x402Facilitator` with the
 * `@x402/evm` `exact` (EIP-3009 and Permit2) and `upto` (Permit2) schemes over a chain kept in
 * memory, so real signatures are checked and real refusals given.
 */
export const startFacilitatorEmulator = async (
  options: FacilitatorEmulatorOptions = {}
): Promise<FacilitatorEmulator> => {
  const network = (options.network ?? DEFAULT_NETWORK) as Network
  const token = tokenFor(options, network)
  const chain: Chain = makeChain({ network, token })
  const signer = emulatedSigner(chain, EMULATOR_FACILITATOR_ADDRESS)
  const facilitator = new x402Facilitator()
    .register(network, new ExactEvmScheme(signer))
    .register(network, new UptoEvmScheme(signer))

  const fund = (address: Address, amountAtomic: bigint) => {
    chain.fund(address, amountAtomic)
    if (chain.allowance(address, permit2Address) === 0n) chain.setAllowance(address, permit2Address, maxUint256)
  }
  for (const f of options.funding ?? [{ address: testWallet().address, amountAtomic: DEFAULT_TEST_WALLET_FUNDING }]) {
    fund(f.address, f.amountAtomic)
  }

  const received: Array<ReceivedRequest> = []
  const troubles: Array<{ path: string; mode: Trouble }> = []
  const hanging = new Set<http.ServerResponse>()

  const answer = async (path: string, body: unknown): Promise<{ status: number; body: unknown }> => {
    if (path === "/supported") return { status: 200, body: facilitator.getSupported() }
    if (!isObject(body) || !isObject(body.paymentPayload) || !isObject(body.paymentRequirements)) {
      return { status: 400, body: { error: "paymentPayload and paymentRequirements are required" } }
    }
    const payload = body.paymentPayload as unknown as PaymentPayload
    const requirements = body.paymentRequirements as unknown as PaymentRequirements
    if (path === "/verify") {
      try {
        return { status: 200, body: await facilitator.verify(payload, requirements) }
      } catch (error) {
        const refusal = refusalOf(error, requirements, network)
        return { status: 200, body: { isValid: false, invalidReason: refusal.reason, invalidMessage: refusal.message } }
      }
    }
    try {
      return { status: 200, body: await facilitator.settle(payload, requirements) }
    } catch (error) {
      const refusal = refusalOf(error, requirements, network)
      return {
        status: 200,
        body: {
          success: false,
          errorReason: refusal.reason,
          errorMessage: refusal.message,
          transaction: "",
          network: requirements.network
        }
      }
    }
  }

  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const path = new URL(req.url ?? "/", "http://emulator").pathname
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" })
        res.end(JSON.stringify(body, (_, v: unknown) => (typeof v === "bigint" ? v.toString() : v)))
      }
      const served = (req.method === "POST" && (path === "/verify" || path === "/settle")) ||
        (req.method === "GET" && path === "/supported")
      if (!served) return send(404, { error: `no route ${req.method} ${path}` })
      let body: unknown
      try {
        body = chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString("utf8"))
      } catch {
        return send(400, { error: "the body is not JSON" })
      }
      received.push({ path, body, at: new Date() })
      const troubleIndex = troubles.findIndex((t) => t.path === path)
      if (troubleIndex >= 0) {
        const [trouble] = troubles.splice(troubleIndex, 1)
        if (trouble!.mode === "hang") return void hanging.add(res)
        return send(500, { error: "the facilitator failed" })
      }
      answer(path, body).then(
        (result) => send(result.status, result.body),
        (error: unknown) => send(500, { error: error instanceof Error ? error.message : String(error) })
      )
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, "127.0.0.1", resolve)
  })
  const port = (server.address() as { port: number }).port

  return {
    url: `http://127.0.0.1:${port}`,
    network,
    asset: token,
    facilitatorAddress: EMULATOR_FACILITATOR_ADDRESS,
    fund,
    setPermit2Allowance: (owner, amountAtomic) => chain.setAllowance(owner, permit2Address, amountAtomic),
    balanceOf: (address) => chain.balanceOf(address),
    settlements: () => chain.settlements(),
    requests: () => [...received],
    trouble: (path, mode) => void troubles.push({ path, mode }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy()
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
