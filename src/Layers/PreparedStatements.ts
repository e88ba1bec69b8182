import { createHash } from "node:crypto"
import pg from "pg"
import { countStatement } from "../Services/Observability/DatabaseMetrics.js"

/** A `pg` client that counts every statement it sends (`db_statements_total`). */
export class CountingClient extends pg.Client {
  // One signature is enough here: the SQL client calls query(text, values, callback).
  override query(config: unknown, values?: unknown, callback?: unknown): any {
    countStatement()
    return (super.query as Function)(config, values, callback)
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
