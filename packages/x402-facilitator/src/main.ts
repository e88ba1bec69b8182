import { startFacilitatorEmulator } from "./emulator.js"
import { testWallet } from "./testWallet.js"

/**
 * The emulator on its own, for an agent or a service run by hand:
 * `npx tsx packages/x402-facilitator/src/main.ts [port]` (default 4402; 0 for any free port).
 */
const port = Number(process.argv[2] ?? 4402)
const emulator = await startFacilitatorEmulator({ port })
const wallet = testWallet().address
process.stdout.write(
  `x402 facilitator emulator at ${emulator.url} (${emulator.network}, asset ${emulator.asset.address})\n` +
    `test wallet ${wallet} holds ${
      emulator.balanceOf(wallet)
    } atomic units; facilitator account ${emulator.facilitatorAddress}\n`
)
const stop = () => void emulator.close().then(() => process.exit(0))
process.once("SIGINT", stop)
process.once("SIGTERM", stop)
