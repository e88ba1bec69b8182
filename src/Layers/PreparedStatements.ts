import { createHash } from "node:crypto"
import pg from "pg"
import { countRoundTrip, countStatement } from "../Services/Observability/DatabaseMetrics.js"

/** A query object of its own (pg-cursor's `Cursor`), not a statement's text. */
const isCursor = (config: unknown) =>
  typeof config === "object" && config !== null && typeof (config as { submit?: unknown }).submit === "function"

/** An empty answer, as `pg` gives for BEGIN. */
const begun = { command: "BEGIN", rowCount: null, oid: null, rows: [], fields: [] }

/**
 * A `pg` client that counts every statement it sends (`db_statements_total`).
 *
 * The pool's clients pipeline (`pipeline: true`, Layers/Database.ts): a statement is written
 * as soon as it is asked for, and the answers come back in order. On such a client a
 * transaction's BEGIN is answered at once instead of after its round trip, so the
 * transaction's first statements follow it in the same write. BEGIN fails only with its
 * session (a FATAL error closes the connection), and then every statement behind it fails
 * too; nothing runs outside the transaction it was meant for.
 */
export class CountingClient extends pg.Client {
  /** Statements sent on this connection and not answered yet: a statement sent at 0 is a round trip. */
  #awaitingAnswers = 0

  // The SQL client calls query(text, values, callback); PreparingClient, query(config, callback).
  override query(config: unknown, valuesOrCallback?: unknown, lastCallback?: unknown): any {
    countStatement()
    if (this.pipeline && isCursor(config) && this.#awaitingAnswers === 0) {
      // A cursor (an export's rows, read in pages) keeps a portal open across round trips,
      // which a pipelined connection cannot carry (`pg` refuses it): the idle connection
      // stops pipelining while the cursor reads, and pipelines again once it is idle.
      const client = this as { pipeline: boolean }
      client.pipeline = false
      this.once("drain", () => (client.pipeline = true))
    }
    const [values, callback] = typeof valuesOrCallback === "function"
      ? [undefined, valuesOrCallback]
      : [valuesOrCallback, lastCallback]
    if (typeof callback !== "function") return (super.query as Function)(config, values, callback)
    if (this.#awaitingAnswers === 0) countRoundTrip()
    this.#awaitingAnswers += 1
    const answeredEarly = this.pipeline && config === "BEGIN"
    if (answeredEarly) process.nextTick(() => callback(null, begun))
    return (super.query as Function)(config, values, (error: unknown, result: unknown) => {
      this.#awaitingAnswers -= 1
      if (!answeredEarly) callback(error, result)
    })
  }
}

/**
 * A `pg` client that sends each parameterised statement as a named (prepared) one, so
 * PostgreSQL parses and plans it once per connection instead of on every call (the hot
 * path's statements are the same text each time). Names are a hash of the text, so a text
 * always has one name. At most 512 statements are named per connection (texts built with
 * a varying shape, such as long IN lists, then go unnamed instead of growing the server's
 * memory); statements without parameters (migrations, SELECT 1) always go unnamed.
 */
const MAX_NAMED_PER_CONNECTION = 512

export class PreparingClient extends CountingClient {
  readonly #names = new Map<string, string>()

  override query(config: unknown, values?: unknown, callback?: unknown): any {
    if (typeof config === "string" && Array.isArray(values) && values.length > 0 && typeof callback === "function") {
      let name = this.#names.get(config)
      if (name === undefined && this.#names.size < MAX_NAMED_PER_CONNECTION) {
        name = `s_${createHash("sha1").update(config).digest("hex").slice(0, 20)}`
        this.#names.set(config, name)
      }
      if (name !== undefined) return (super.query as Function)({ name, text: config, values }, callback)
    }
    return (super.query as Function)(config, values, callback)
  }
}
