import type { EventType } from "./Events.js"

/**
 * Each event type in the words an owner uses, for the dashboard and the mails; the API and
 * webhook receivers keep the type itself ("budget.80pct").
 */
export const eventTitles: Record<EventType, string> = {
  "balance.low": "Credit balance low",
  "budget.80pct": "An agent has used 80% of its monthly budget",
  "approval.requested": "A purchase waits for approval",
  "approval.decided": "A purchase was approved or rejected",
  "job.completed": "A purchase finished",
  "tool.paused": "A tool was paused",
  "dispute.decided": "A dispute was decided",
  "price.changed": "A tool's price changes",
  "trial.expiring": "Trial credits expire soon",
  "webhook.test": "Test event"
}

/** The title of a type the service sent (a type this version does not know is shown as it is). */
export const eventTitle = (type: string): string =>
  Object.hasOwn(eventTitles, type) ? eventTitles[type as EventType] : type
