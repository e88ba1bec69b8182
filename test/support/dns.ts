import { Layer } from "effect"
import { DnsResolver } from "../../src/Services/Webhooks/WebhookHttp.js"

/** A stand-in for DNS answering from `answers` (a name not listed does not resolve); the test may change the map. */
export const fakeDns = (answers: Map<string, Array<string>>) =>
  Layer.succeed(DnsResolver, {
    lookup: async (hostname: string) => {
      const found = answers.get(hostname)
      if (found === undefined) throw Object.assign(new Error(`${hostname} not found`), { code: "ENOTFOUND" })
      return found.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))
    }
  })
