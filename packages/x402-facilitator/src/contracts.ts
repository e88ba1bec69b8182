import {
  eip3009ABI,
  erc20AllowanceAbi,
  PERMIT2_ADDRESS,
  x402ExactPermit2ProxyABI,
  x402ExactPermit2ProxyAddress,
  x402UptoPermit2ProxyABI,
  x402UptoPermit2ProxyAddress
} from "@x402/evm"
import { type Abi, getAddress, parseAbi } from "viem"

/**
 * The contracts the facilitator schemes talk to, at the addresses they are deployed at on every
 * EVM chain x402 serves, with the ABIs `@x402/evm` calls them by. The emulated chain answers
 * calls to these addresses; any other address has no code, as an externally owned account.
 */

export type Address = `0x${string}`

/** Multicall3, deployed at the same address on every EVM chain; the schemes batch reads through it. */
export const MULTICALL3_ADDRESS: Address = "0xcA11bde05977b3631167028862bE2a173976CA11"

export const multicall3Abi = [
  {
    inputs: [
      { name: "requireSuccess", type: "bool" },
      {
        name: "calls",
        type: "tuple[]",
        components: [
          { name: "target", type: "address" },
          { name: "callData", type: "bytes" }
        ]
      }
    ],
    name: "tryAggregate",
    outputs: [
      {
        name: "returnData",
        type: "tuple[]",
        components: [
          { name: "success", type: "bool" },
          { name: "returnData", type: "bytes" }
        ]
      }
    ],
    stateMutability: "payable",
    type: "function"
  }
] as const

/** The token: ERC-20 with EIP-3009 (`transferWithAuthorization`), as USDC is. */
export const tokenAbi: Abi = [
  ...eip3009ABI,
  ...erc20AllowanceAbi,
  ...parseAbi([
    "function approve(address spender, uint256 amount) returns (bool)",
    "function decimals() view returns (uint8)"
  ])
]

export const transferEventAbi = parseAbi([
  "event Transfer(address indexed from, address indexed to, uint256 value)"
])

export const permit2Address: Address = getAddress(PERMIT2_ADDRESS)
export const exactProxyAddress: Address = getAddress(x402ExactPermit2ProxyAddress)
export const uptoProxyAddress: Address = getAddress(x402UptoPermit2ProxyAddress)
export const exactProxyAbi: Abi = x402ExactPermit2ProxyABI
export const uptoProxyAbi: Abi = x402UptoPermit2ProxyABI

/** Some bytes of code, so `eth_getCode` tells a contract from an account, as a chain does. */
export const CONTRACT_CODE: `0x${string}` = "0x6080604052348015600f57600080fd5b50"
