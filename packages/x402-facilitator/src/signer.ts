import type { FacilitatorEvmSigner } from "@x402/evm"
import { type Abi, type TypedDataDefinition, verifyTypedData } from "viem"
import type { Chain } from "./chain.js"
import type { Address } from "./contracts.js"

/**
 * The facilitator's EVM signer over the emulated chain: every method the `exact` and `upto`
 * facilitator schemes call (reads, simulations, the settlement transaction, its receipt, code
 * lookups), answered by the chain in memory instead of an RPC node. Transactions go out from
 * `address`, the facilitator's account, which the `upto` proxy checks as the caller.
 */
export const emulatedSigner = (chain: Chain, address: Address): FacilitatorEvmSigner => ({
  getAddresses: () => [address],
  readContract: ({ address: target, abi, functionName, args }) =>
    // As viem's wallet client reads, from the facilitator's own account.
    chain.read(address, { address: target, abi: abi as Abi, functionName, ...(args === undefined ? {} : { args }) }),
  verifyTypedData: ({ address: signerAddress, domain, types, primaryType, message, signature }) =>
    verifyTypedData(
      { address: signerAddress, domain, types, primaryType, message, signature } as TypedDataDefinition & {
        address: Address
        signature: `0x${string}`
      }
    ),
  writeContract: ({ address: target, abi, functionName, args }) =>
    chain.write(address, { address: target, abi: abi as Abi, functionName, args }),
  sendTransaction: () =>
    Promise.reject(new Error("the emulated chain deploys no contracts (ERC-6492 smart wallets are not emulated)")),
  waitForTransactionReceipt: async ({ hash }) => {
    const receipt = chain.receipt(hash)
    if (receipt === undefined) throw new Error(`transaction ${hash} is not known to the emulated chain`)
    return receipt
  },
  getCode: async ({ address: target }) => chain.getCode(target)
})
