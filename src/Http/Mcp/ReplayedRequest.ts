import { IncomingMessage } from "node:http"

/**
 * A Node request whose body was already read (the edge reads every body to check it,
 * RequestChecks.ts), carrying that body again for a handler that reads the Node stream
 * itself (the authorization server). Method, target, headers and socket are the original's;
 * the length header is the body's own, as it is handed over whole.
 */
export class ReplayedRequest extends IncomingMessage {
  constructor(source: IncomingMessage, body: Buffer) {
    super(source.socket)
    this.method = source.method
    this.url = source.url
    this.httpVersion = source.httpVersion
    this.httpVersionMajor = source.httpVersionMajor
    this.httpVersionMinor = source.httpVersionMinor
    const { "transfer-encoding": _chunked, ...headers } = source.headers
    this.headers = { ...headers, "content-length": String(body.length) }
    this.complete = true
    this.push(body)
    this.push(null)
  }

  // Everything is pushed already; the socket is the original request's to read, not this one's.
  override _read() {}

  // Nor this one's to close: a message of the parser's own destroys its socket when it ends early.
  override _destroy(error: Error | null, callback: (error?: Error | null) => void) {
    callback(error)
  }
}
