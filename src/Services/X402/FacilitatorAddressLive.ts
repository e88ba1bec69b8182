import { startFacilitatorEmulator } from "@agent-gateway/x402-facilitator"
import { Effect, Layer, Option } from "effect"
import { FacilitatorAddress } from "./Facilitator.js"
import { X402Config } from "./X402Config.js"

/**
 * The facilitator: X402_FACILITATOR_URL when set; otherwise (development only: X402Config
 * refuses production without it) the facilitator emulator (packages/x402-facilitator) on
 * loopback, serving the configured network and asset, with its test wallet funded, so
 * `X402_ENABLED=true npm start` shows the whole flow with nothing installed. It stops with
 * the service.
 */
export const FacilitatorAddressLive = Layer.scoped(
  FacilitatorAddress,
  Effect.gen(function*() {
    const config = yield* X402Config
    if (Option.isSome(config.facilitatorUrl)) return { url: config.facilitatorUrl.value, emulated: false }
    const emulator = yield* Effect.acquireRelease(
      Effect.promise(() =>
        startFacilitatorEmulator({
          network: config.network,
          asset: config.asset as `0x${string}`,
          assetName: config.assetName,
          assetVersion: config.assetVersion
        })
      ),
      (running) => Effect.promise(() => running.close())
    )
    yield* Effect.logInfo(
      `x402: the facilitator emulator at ${emulator.url} (${config.network}; no chain, no money moves)`
    )
    return { url: emulator.url, emulated: true }
  })
)
