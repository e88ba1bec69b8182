import { Effect, Layer } from "effect"
import type { Server } from "node:http"
import type { Duplex } from "node:stream"
import type { ErrorCode } from "../Errors/ErrorCatalogue.js"
import { errorCatalogue } from "../Errors/ErrorCatalogue.js"
import { wireBody } from "../Errors/Wire.js"
import { PublicUrl } from "../Services/PublicUrl.js"

/**
 * Requests Node's own HTTP parser refuses before any handler runs (a NUL or space in the
 * path, control characters in a header, a negative Content-Length, headers or a path over
 * Node's size limit) get the service's error body instead of Node's empty 400 or 431.
 */

const reasonPhrases: Record<number, string> = {
  400: "Bad Request",
  413: "Payload Too Large",
  503: "Service Unavailable"
}

/** What to answer for a parser error code (`HPE_*`), or undefined when nothing should be sent. */
export const answerForParserError = (code: string | undefined): { code: ErrorCode; message: string } | undefined => {
  switch (code) {
    case "ECONNRESET":
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return undefined
    case "HPE_HEADER_OVERFLOW":
      return { code: "payload_too_large", message: "The request line or headers are over the size limit" }
    case "HPE_INVALID_CONTENT_LENGTH":
    case "HPE_UNEXPECTED_CONTENT_LENGTH":
      return { code: "invalid_input", message: "The Content-Length header is invalid" }
    case "HPE_INVALID_HEADER_TOKEN":
      return { code: "invalid_input", message: "A header name or value contains a character that is not allowed" }
    case "HPE_INVALID_URL":
      return { code: "invalid_input", message: "The request path contains a character that is not allowed" }
    case "HPE_INVALID_METHOD":
      return { code: "invalid_input", message: "The request method is not valid" }
    default:
      return { code: "invalid_input", message: "The request could not be parsed as HTTP/1.1" }
  }
}

/** A whole HTTP/1.1 answer with the error body, closing the connection, for a socket no handler will see. */
export const rawAnswer = (
  baseUrl: string,
  code: ErrorCode,
  message: string,
  headers: Record<string, string> = {}
): string => {
  const body = JSON.stringify(wireBody(baseUrl, code, message))
  const status = errorCatalogue[code].status
  return `HTTP/1.1 ${status} ${reasonPhrases[status] ?? "Error"}\r\n` +
    "content-type: application/json\r\n" +
    Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join("") +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    "connection: close\r\n\r\n" + body
}

export const ClientErrorsLive = (server: Server) =>
  Layer.scopedDiscard(
    Effect.gen(function*() {
      const baseUrl = yield* PublicUrl
      const onClientError = (error: Error & { code?: string }, socket: Duplex) => {
        const answer = answerForParserError(error.code)
        if (answer === undefined || !socket.writable) return void socket.destroy()
        socket.end(rawAnswer(baseUrl, answer.code, answer.message))
      }
      yield* Effect.acquireRelease(
        Effect.sync(() => server.on("clientError", onClientError)),
        () => Effect.sync(() => server.off("clientError", onClientError))
      )
    })
  )
