import { Layer } from "effect"
import { createTestDatabase, type TestDatabase } from "../../support/database.js"
import { startServer, type TestServer } from "../../support/server.js"
import { type ReceiverMode, startReceiver, type TestReceiver } from "./receiver.js"
import { type EventEmitter, eventEmitter } from "./services.js"

/**
 * A webhook world: the service on its own database, a webhook receiver on loopback for its
 * deliveries, and the event store's emitter to raise events without another area's endpoints.
 */
export interface WebhookWorld {
  readonly db: TestDatabase
  readonly server: TestServer
  readonly receiver: TestReceiver
  readonly emitter: EventEmitter
  readonly close: () => Promise<void>
}

export const startWebhookWorld = async (
  label: string,
  options: {
    /** How the receiver answers at first (it can be switched later with `setMode`). */
    readonly receiverMode?: ReceiverMode
    /** The time both the service and the emitter read (e.g. a shiftable clock's layer). */
    readonly clock?: Layer.Layer<never>
  } = {}
): Promise<WebhookWorld> => {
  const db = await createTestDatabase(label)
  const receiver = await startReceiver(options.receiverMode)
  const clock = options.clock ?? Layer.empty
  let server: TestServer | undefined
  let emitter: EventEmitter | undefined
  const close = async () => {
    await emitter?.close()
    await server?.close()
    await receiver.close()
    await db.drop()
  }
  try {
    server = await startServer({ DATABASE_URL: db.url }, clock)
    emitter = eventEmitter(db, {}, clock)
  } catch (error) {
    // Nothing from a half-started world may outlive the suite.
    await close()
    throw error
  }
  return { db, server, receiver, emitter, close }
}
