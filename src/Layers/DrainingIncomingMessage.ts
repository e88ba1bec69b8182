import { IncomingMessage } from "node:http"

/**
 * A request that, when told to stop being read (as the platform does when a body passes
 * the 1 MB limit), stops buffering and lets Node discard the rest instead of destroying
 * the socket, so the client still receives the 413 answer. Node ends such a connection
 * once the answer is sent; its request timeout bounds how long a sender can keep going.
 */
export class DrainingIncomingMessage extends IncomingMessage {
  override destroy(error?: Error): this {
    if (this.complete || error !== undefined) return super.destroy(error)
    this.removeAllListeners("data")
    this.resume()
    return this
  }
}
