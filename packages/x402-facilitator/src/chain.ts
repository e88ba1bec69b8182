import { authorizationTypes, permit2WitnessTypes, uptoPermit2WitnessTypes } from "@x402/evm"
import {
  type Abi,
  decodeFunctionData,
  encodeAbiParameters,
  encodeEventTopics,
  encodeFunctionResult,
  getAddress,
  hashTypedData,
  type Hex,
  keccak256,
  type Log,
  maxUint256,
  recoverAddress,
  type Signature,
  toHex,
  type TypedDataDefinition,
  zeroAddress
} from "viem"
import {
  type Address,
  CONTRACT_CODE,
  exactProxyAbi,
  exactProxyAddress,
  MULTICALL3_ADDRESS,
  multicall3Abi,
  permit2Address,
  tokenAbi,
  transferEventAbi,
  uptoProxyAbi,
  uptoProxyAddress
} from "./contracts.js"

/**
 * An EVM chain kept in memory, holding just what the x402 facilitator schemes read and write:
 * one token (ERC-20 with EIP-3009, as USDC), Permit2 and the two x402 Permit2 proxies, and
 * Multicall3. Calls are executed with the checks those contracts make on chain (signatures
 * recovered from the EIP-712 digest, nonces, deadlines, balances, allowances, the caller), so
 * what a chain refuses this one refuses too, with the revert reasons the schemes recognise.
 * A read of a state-changing function is a simulation: it runs on a copy and is thrown away.
 */

export interface TokenInfo {
  readonly address: Address
  /** EIP-712 domain name and version of the token, as its contract reports them. */
  readonly name: string
  readonly version: string
  readonly decimals: number
}

/** One transfer a settlement made on the emulated chain. */
export interface Settlement {
  readonly transaction: Hex
  readonly network: string
  readonly asset: Address
  readonly from: Address
  readonly to: Address
  readonly amount: bigint
  /** The contract path it took: EIP-3009 on the token, or Permit2 through the exact or upto proxy. */
  readonly method: "eip3009" | "permit2-exact" | "permit2-upto"
  readonly at: Date
}

export interface Receipt {
  readonly status: "success" | "reverted"
  readonly logs: ReadonlyArray<Log>
}

/** A call the contract refused; its message carries the reason as viem reports a revert. */
export class ContractRevert extends Error {
  constructor(readonly functionName: string, readonly reason: string) {
    super(`The contract function "${functionName}" reverted with the following reason:\n${reason}`)
    this.name = "ContractFunctionRevertedError"
  }
}

interface State {
  readonly balances: Map<Address, bigint>
  readonly allowances: Map<string, bigint>
  readonly usedAuthorizations: Set<string>
  readonly usedPermit2Nonces: Set<string>
}

interface Effects {
  readonly transfers: Array<Omit<Settlement, "transaction" | "network" | "at">>
}

const copy = (state: State): State => ({
  balances: new Map(state.balances),
  allowances: new Map(state.allowances),
  usedAuthorizations: new Set(state.usedAuthorizations),
  usedPermit2Nonces: new Set(state.usedPermit2Nonces)
})

const key = (...parts: ReadonlyArray<string | bigint>) => parts.map((p) => String(p).toLowerCase()).join(":")

const nowSeconds = () => BigInt(Math.floor(Date.now() / 1000))

/** A 65-byte signature as the contracts take it: bytes, or (v, r, s) split. */
const signatureOf = (args: ReadonlyArray<unknown>): Hex | Signature => {
  if (args.length === 3) {
    const v = BigInt(args[0] as number | bigint)
    return { r: args[1] as Hex, s: args[2] as Hex, yParity: Number(v >= 27n ? v - 27n : v) }
  }
  return args[0] as Hex
}

/** Half the secp256k1 order: USDC's ECRecover refuses an `s` above it (a malleated signature). */
const HALF_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n

const lowS = (signature: Hex | Signature) =>
  BigInt(typeof signature === "string" ? `0x${signature.slice(66, 130)}` : signature.s) <= HALF_ORDER

const recovers = async (digest: Hex, signature: Hex | Signature, expected: Address) => {
  try {
    return getAddress(await recoverAddress({ hash: digest, signature })) === getAddress(expected)
  } catch {
    return false
  }
}

export interface Chain {
  readonly chainId: number
  readonly token: TokenInfo
  getCode(address: Address): Hex | undefined
  /** An `eth_call` from `sender`: executes on a copy of the state; a refusal throws {@link ContractRevert}. */
  read(
    sender: Address,
    args: { address: Address; abi: Abi; functionName: string; args?: ReadonlyArray<unknown> }
  ): Promise<unknown>
  /** A transaction from `sender`, mined at once: a refusal throws (as gas estimation would); else its hash. */
  write(
    sender: Address,
    args: { address: Address; abi: Abi; functionName: string; args: ReadonlyArray<unknown> }
  ): Promise<Hex>
  receipt(hash: Hex): Receipt | undefined
  fund(address: Address, amount: bigint): void
  setAllowance(owner: Address, spender: Address, amount: bigint): void
  balanceOf(address: Address): bigint
  allowance(owner: Address, spender: Address): bigint
  settlements(): ReadonlyArray<Settlement>
}

export const makeChain = (options: { readonly network: string; readonly token: TokenInfo }): Chain => {
  const chainId = Number(options.network.split(":")[1])
  const token: TokenInfo = { ...options.token, address: getAddress(options.token.address) }
  let state: State = {
    balances: new Map(),
    allowances: new Map(),
    usedAuthorizations: new Set(),
    usedPermit2Nonces: new Set()
  }
  const receipts = new Map<Hex, Receipt>()
  const settled: Array<Settlement> = []
  let blockNumber = 1n

  const balance = (s: State, who: Address) => s.balances.get(getAddress(who)) ?? 0n
  const allowanceIn = (s: State, owner: Address, spender: Address) => s.allowances.get(key(owner, spender)) ?? 0n

  const move = (
    s: State,
    fx: Effects,
    from: Address,
    to: Address,
    amount: bigint,
    method: Settlement["method"],
    fn: string
  ) => {
    const available = balance(s, from)
    if (available < amount) throw new ContractRevert(fn, "ERC20: transfer amount exceeds balance")
    s.balances.set(getAddress(from), available - amount)
    s.balances.set(getAddress(to), balance(s, to) + amount)
    fx.transfers.push({ asset: token.address, from: getAddress(from), to: getAddress(to), amount, method })
  }

  /** Permit2's `permitWitnessTransferFrom`, called by a proxy (`spender`) for `owner`. */
  const permitWitnessTransferFrom = async (
    s: State,
    fx: Effects,
    fn: string,
    call: {
      spender: Address
      permit: { permitted: { token: Address; amount: bigint }; nonce: bigint; deadline: bigint }
      owner: Address
      to: Address
      requestedAmount: bigint
      witness: Record<string, unknown>
      types: typeof permit2WitnessTypes | typeof uptoPermit2WitnessTypes
      signature: Hex
      method: Settlement["method"]
    }
  ) => {
    if (nowSeconds() > call.permit.deadline) throw new ContractRevert(fn, `SignatureExpired(${call.permit.deadline})`)
    if (call.requestedAmount > call.permit.permitted.amount) {
      throw new ContractRevert(fn, `InvalidAmount(${call.permit.permitted.amount})`)
    }
    const nonceKey = key(call.owner, call.permit.nonce)
    if (s.usedPermit2Nonces.has(nonceKey)) throw new ContractRevert(fn, "InvalidNonce()")
    const digest = hashTypedData({
      domain: { name: "Permit2", chainId, verifyingContract: permit2Address },
      types: call.types,
      primaryType: "PermitWitnessTransferFrom",
      message: {
        permitted: { token: getAddress(call.permit.permitted.token), amount: call.permit.permitted.amount },
        spender: call.spender,
        nonce: call.permit.nonce,
        deadline: call.permit.deadline,
        witness: call.witness
      }
    } as TypedDataDefinition)
    if (!(await recovers(digest, call.signature, call.owner))) throw new ContractRevert(fn, "InvalidSigner()")
    s.usedPermit2Nonces.add(nonceKey)
    if (getAddress(call.permit.permitted.token) !== token.address) {
      // Permit2 would call a token with no code here; the transfer cannot happen.
      throw new ContractRevert(fn, "TRANSFER_FROM_FAILED")
    }
    const allowed = allowanceIn(s, call.owner, permit2Address)
    if (allowed < call.requestedAmount) throw new ContractRevert(fn, "ERC20: insufficient allowance")
    if (allowed !== maxUint256) s.allowances.set(key(call.owner, permit2Address), allowed - call.requestedAmount)
    move(s, fx, call.owner, call.to, call.requestedAmount, call.method, fn)
  }

  type Permit = { permitted: { token: Address; amount: bigint }; nonce: bigint; deadline: bigint }

  /** Executes a decoded call against `s` as `sender`; answers the function's return value. */
  const execute = async (
    s: State,
    fx: Effects,
    sender: Address,
    address: Address,
    fn: string,
    args: ReadonlyArray<unknown>
  ): Promise<unknown> => {
    const target = getAddress(address)
    if (target === token.address) {
      switch (fn) {
        case "name":
          return token.name
        case "version":
          return token.version
        case "decimals":
          return token.decimals
        case "balanceOf":
          return balance(s, args[0] as Address)
        case "allowance":
          return allowanceIn(s, args[0] as Address, args[1] as Address)
        case "authorizationState":
          return s.usedAuthorizations.has(key(args[0] as Address, args[1] as Hex))
        case "approve":
          s.allowances.set(key(sender, args[0] as Address), args[1] as bigint)
          return true
        case "transferWithAuthorization": {
          const [from, to, value, validAfter, validBefore, nonce] = args as [
            Address,
            Address,
            bigint,
            bigint,
            bigint,
            Hex
          ]
          const now = nowSeconds()
          if (now <= validAfter) throw new ContractRevert(fn, "FiatTokenV2: authorization is not yet valid")
          if (now >= validBefore) throw new ContractRevert(fn, "FiatTokenV2: authorization is expired")
          if (s.usedAuthorizations.has(key(from, nonce))) {
            throw new ContractRevert(fn, "FiatTokenV2: authorization is used or canceled")
          }
          const digest = hashTypedData({
            domain: { name: token.name, version: token.version, chainId, verifyingContract: token.address },
            types: authorizationTypes,
            primaryType: "TransferWithAuthorization",
            message: { from, to, value, validAfter, validBefore, nonce }
          })
          const signature = signatureOf(args.slice(6))
          if (!lowS(signature)) throw new ContractRevert(fn, "ECRecover: invalid signature 's' value")
          if (!(await recovers(digest, signature, from))) throw new ContractRevert(fn, "FiatTokenV2: invalid signature")
          s.usedAuthorizations.add(key(from, nonce))
          move(s, fx, from, to, value, "eip3009", fn)
          return undefined
        }
      }
    }
    if (target === exactProxyAddress || target === uptoProxyAddress) {
      if (fn === "PERMIT2") return permit2Address
      if (fn === "settle") {
        const upto = target === uptoProxyAddress
        const [permit, amount, owner, witness, signature] = upto
          ? (args as [Permit, bigint, Address, { to: Address; facilitator: Address; validAfter: bigint }, Hex])
          : [
            args[0] as Permit,
            (args[0] as Permit).permitted.amount,
            args[1] as Address,
            args[2] as { to: Address; facilitator: Address; validAfter: bigint },
            args[3] as Hex
          ]
        if (upto && amount > permit.permitted.amount) throw new ContractRevert(fn, "AmountExceedsPermitted()")
        if (upto && getAddress(witness.facilitator) !== getAddress(sender)) {
          throw new ContractRevert(fn, "UnauthorizedFacilitator()")
        }
        if (getAddress(owner) === zeroAddress) throw new ContractRevert(fn, "InvalidOwner()")
        if (getAddress(witness.to) === zeroAddress) throw new ContractRevert(fn, "InvalidDestination()")
        if (nowSeconds() < witness.validAfter) throw new ContractRevert(fn, "PaymentTooEarly()")
        await permitWitnessTransferFrom(s, fx, fn, {
          spender: target,
          permit,
          owner,
          to: witness.to,
          requestedAmount: amount,
          witness: upto
            ? {
              to: getAddress(witness.to),
              facilitator: getAddress(witness.facilitator),
              validAfter: witness.validAfter
            }
            : { to: getAddress(witness.to), validAfter: witness.validAfter },
          types: upto ? uptoPermit2WitnessTypes : permit2WitnessTypes,
          signature,
          method: upto ? "permit2-upto" : "permit2-exact"
        })
        return undefined
      }
      // EIP-2612 and ERC-20 approval gas sponsoring are not emulated: the wallet approves Permit2 itself.
      throw new ContractRevert(fn, "not available on the emulated chain")
    }
    if (target === MULTICALL3_ADDRESS && fn === "tryAggregate") {
      const calls = args[1] as ReadonlyArray<{ target: Address; callData: Hex }>
      const results: Array<{ success: boolean; returnData: Hex }> = []
      for (const call of calls) {
        const abi = abiAt(call.target)
        if (abi === undefined) {
          // A call to an account with no code succeeds and returns nothing, as on chain.
          results.push({ success: true, returnData: "0x" })
          continue
        }
        try {
          const decoded = decodeFunctionData({ abi, data: call.callData })
          const inner = copy(s)
          const result = await execute(
            inner,
            { transfers: [] },
            MULTICALL3_ADDRESS,
            call.target,
            decoded.functionName,
            decoded.args ?? []
          )
          results.push({ success: true, returnData: encodeResult(abi, decoded.functionName, result) })
        } catch {
          results.push({ success: false, returnData: "0x" })
        }
      }
      return results
    }
    throw new ContractRevert(fn, `no function ${fn} at ${target}`)
  }

  const abiAt = (address: Address): Abi | undefined => {
    const target = getAddress(address)
    if (target === token.address) return tokenAbi
    if (target === exactProxyAddress) return exactProxyAbi
    if (target === uptoProxyAddress) return uptoProxyAbi
    if (target === MULTICALL3_ADDRESS) return multicall3Abi
    return undefined
  }

  const encodeResult = (abi: Abi, functionName: string, result: unknown): Hex => {
    const fn = abi.find((item) => item.type === "function" && item.name === functionName)
    if (fn === undefined || fn.type !== "function" || fn.outputs.length === 0) return "0x"
    return encodeFunctionResult({ abi: [fn], functionName, result: result as never })
  }

  const transferLog = (transfer: Effects["transfers"][number], transactionHash: Hex, logIndex: number): Log => ({
    address: transfer.asset,
    topics: encodeEventTopics({
      abi: transferEventAbi,
      eventName: "Transfer",
      args: { from: transfer.from, to: transfer.to }
    }) as [Hex, ...Array<Hex>],
    data: encodeAbiParameters([{ type: "uint256" }], [transfer.amount]),
    blockHash: keccak256(toHex(`block ${blockNumber}`)),
    blockNumber,
    logIndex,
    transactionHash,
    transactionIndex: 0,
    removed: false
  })

  let lastWrite: Promise<void> = Promise.resolve()
  // The copy a transaction being mined works on; funding meanwhile lands in it too.
  let inFlight: State | undefined
  const mine = async (
    sender: Address,
    { address, functionName, args }: { address: Address; functionName: string; args: ReadonlyArray<unknown> }
  ): Promise<Hex> => {
    const draft = copy(state)
    inFlight = draft
    const fx: Effects = { transfers: [] }
    try {
      await execute(draft, fx, getAddress(sender), address, functionName, args)
    } finally {
      inFlight = undefined
    }
    state = draft
    blockNumber += 1n
    const hash = keccak256(toHex(`${options.network} ${blockNumber} ${functionName} ${crypto.randomUUID()}`))
    receipts.set(hash, { status: "success", logs: fx.transfers.map((t, i) => transferLog(t, hash, i)) })
    const at = new Date()
    for (const t of fx.transfers) settled.push({ ...t, transaction: hash, network: options.network, at })
    return hash
  }

  return {
    chainId,
    token,
    getCode: (
      address
    ) => (abiAt(address) !== undefined || getAddress(address) === permit2Address ? CONTRACT_CODE : undefined),
    read: async (sender, { address, functionName, args }) =>
      execute(copy(state), { transfers: [] }, getAddress(sender), address, functionName, args ?? []),
    // Transactions are mined one at a time, as a block orders them: two settlements of one
    // authorisation at once cannot both see its nonce unused.
    write: (sender, call) => {
      const mined = lastWrite.then(() => mine(sender, call))
      lastWrite = mined.then(() => undefined, () => undefined)
      return mined
    },
    receipt: (hash) => receipts.get(hash),
    fund: (address, amount) => {
      for (const s of inFlight === undefined ? [state] : [state, inFlight]) {
        s.balances.set(getAddress(address), balance(s, address) + amount)
      }
    },
    setAllowance: (owner, spender, amount) => {
      for (const s of inFlight === undefined ? [state] : [state, inFlight]) {
        s.allowances.set(key(owner, spender), amount)
      }
    },
    balanceOf: (address) => balance(state, address),
    allowance: (owner, spender) => allowanceIn(state, owner, spender),
    settlements: () => [...settled]
  }
}
