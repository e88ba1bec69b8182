import { Effect, Schema } from "effect"
import * as fs from "node:fs"
import { projectRoot } from "../ProjectRoot.js"

/**
 * Reads a JSON data file shipped with the service (under ./data) and checks it against
 * its schema, so a malformed file stops the start instead of serving bad data.
 */
export const readDataFile = <A, I>(relativePath: string, schema: Schema.Schema<A, I>) =>
  Effect.try(() => JSON.parse(fs.readFileSync(new URL(`data/${relativePath}`, projectRoot), "utf8"))).pipe(
    Effect.flatMap(Schema.decodeUnknown(schema)),
    Effect.orDieWith((cause) => new Error(`Data file data/${relativePath} is invalid: ${String(cause)}`))
  )
