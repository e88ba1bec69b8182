import { eventTitle } from "@agent-gateway/contract/Domain/EventTitles.js"
import type { OrgId, WebhookDeliveryId } from "@agent-gateway/contract/Domain/Ids.js"
import type { Delivery, WebhookEndpoint } from "@agent-gateway/contract/Domain/Webhook.js"
import { useState } from "react"
import { useApiMutation, useApiQuery, useCursorPages } from "../api/hooks.js"
import { useOrg } from "../api/org.js"
import { ConfirmButton } from "../components/ConfirmButton.js"
import { localDateTime } from "../components/format.js"
import { PagedTable } from "../components/PagedTable.js"
import { Empty, ErrorNotice, Loaded, Pager, type ShownSecret, Status, useSecretOnce, When } from "../components/ui.js"

/** How long a new signing secret stays on screen (it is never shown again). */
const SECRET_SHOWN_MS = 10 * 60 * 1000

const NewWebhook = ({ orgId, eventTypes, onSecret }: {
  readonly orgId: OrgId
  readonly eventTypes: ReadonlyArray<string>
  readonly onSecret: (secret: ShownSecret) => void
}) => {
  const [url, setUrl] = useState("")
  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set())
  const create = useApiMutation(
    (c) => c.webhooks.create({ path: { orgId }, payload: { url, events: [...picked] } }),
    [["webhooks", orgId]]
  )
  return (
    <form
      className="card stack"
      aria-label="New webhook endpoint"
      onSubmit={(event) => {
        event.preventDefault()
        create.mutate(undefined, {
          onSuccess: (made) => {
            onSecret({ title: `Signing secret of ${made.webhook.url}`, secret: made.webhook.secret, note: made.note })
            setUrl("")
            setPicked(new Set())
          }
        })
      }}
    >
      <h2>Add an endpoint</h2>
      <label>
        URL
        <input
          type="url"
          required
          placeholder="https://example.com/hooks"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
        />
      </label>
      <fieldset>
        <legend>Event types (none picked: every event)</legend>
        <div className="checks">
          {eventTypes.map((type) => (
            <label key={type} className="check">
              <input
                type="checkbox"
                checked={picked.has(type)}
                onChange={(e) => {
                  const next = new Set(picked)
                  if (e.target.checked) next.add(type)
                  else next.delete(type)
                  setPicked(next)
                }}
              />
              <span title={type}>{eventTitle(type)}</span>
            </label>
          ))}
        </div>
      </fieldset>
      <div className="actions">
        <button type="submit" disabled={create.isPending}>Add endpoint</button>
      </div>
      <ErrorNotice error={create.error} />
    </form>
  )
}

type WebhookRecord = typeof WebhookEndpoint.json.Type

/** What an owner keeps in mind after a rotation, in their words (the service's note names headers). */
const rotationNote = (until: Date | null) =>
  "The new secret is shown only now: store it with your receiver. The previous secret keeps working for 24 hours" +
  (until === null ? "" : `, until ${localDateTime(until.toISOString())}`) +
  ": meanwhile every delivery is signed with both, so switch your receiver to the new one within that time."

/** The form's value for an instant: the viewer's local time, to the minute. */
const toLocalInput = (at: Date) => {
  const local = new Date(at.getTime() - at.getTimezoneOffset() * 60_000)
  return local.toISOString().slice(0, 16)
}

/** Resends an endpoint's events since a time (all, or only those that failed), with their ids unchanged. */
const ResendSince = ({ orgId, webhook }: { readonly orgId: OrgId; readonly webhook: WebhookRecord }) => {
  const [since, setSince] = useState(() => toLocalInput(new Date(Date.now() - 24 * 3600 * 1000)))
  const [onlyFailed, setOnlyFailed] = useState(true)
  const replay = useApiMutation(
    (c) =>
      c.webhooks.replay({
        path: { orgId, id: webhook.id },
        // The form's "2026-11-27T14:05" is read in the viewer's zone, as they typed it.
        payload: { since: new Date(since), only_failed: onlyFailed }
      }),
    [["deliveries", orgId]]
  )
  return (
    <form
      className="row"
      aria-label={`Resend events to ${webhook.url}`}
      onSubmit={(event) => {
        event.preventDefault()
        replay.mutate(undefined)
      }}
    >
      <label>
        Resend since
        <input type="datetime-local" required value={since} onChange={(e) => setSince(e.target.value)} />
      </label>
      <label className="check">
        <input type="checkbox" checked={onlyFailed} onChange={(e) => setOnlyFailed(e.target.checked)} />
        Only failed deliveries
      </label>
      <button type="submit" className="secondary" disabled={replay.isPending || since === ""}>
        {replay.isPending ? "Resending…" : "Resend"}
      </button>
      {replay.data === undefined ? null : (
        <p role="status" className="muted">
          {replay.data.replayed === 0
            ? "Nothing to resend since then."
            : `${replay.data.replayed} ${
              replay.data.replayed === 1 ? "event" : "events"
            } sent again, with the same ids.`}
        </p>
      )}
      <ErrorNotice error={replay.error} />
    </form>
  )
}

const WebhookRow = ({ orgId, webhook, isOwner, onSecret }: {
  readonly orgId: OrgId
  readonly webhook: WebhookRecord
  readonly isOwner: boolean
  readonly onSecret: (secret: ShownSecret) => void
}) => {
  const test = useApiMutation((c) => c.webhooks.test({ path: { orgId, id: webhook.id } }), [["deliveries", orgId]])
  const remove = useApiMutation((c) => c.webhooks.remove({ path: { orgId, id: webhook.id } }), [["webhooks", orgId]])
  const rotate = useApiMutation(
    (c) => c.webhooks.rotateSecret({ path: { orgId, id: webhook.id } }),
    [["webhooks", orgId]]
  )
  return (
    <li className="card" data-testid={`webhook-${webhook.url}`}>
      <div className="agent-head">
        <h3>
          <code>{webhook.url}</code>
        </h3>
        <span className="muted">secret {webhook.secret_prefix}…</span>
      </div>
      <p className="muted">
        {webhook.events.length === 0 ? "Every event" : webhook.events.join(", ")}. Added{" "}
        <When at={webhook.created_at} />.
        {webhook.previous_secret_expires_at === null ? null : (
          <>
            {" "}The previous secret keeps working until <When at={webhook.previous_secret_expires_at} />.
          </>
        )}
      </p>
      <div className="actions">
        <button type="button" className="secondary" disabled={test.isPending} onClick={() => test.mutate(undefined)}>
          {test.isPending ? "Sending…" : "Send a test"}
        </button>
        {isOwner ?
          (
            <ConfirmButton
              className="secondary"
              disabled={rotate.isPending}
              question={`Make a new signing secret for ${webhook.url}? The current one keeps working for 24 hours.`}
              confirmLabel="Rotate secret"
              onConfirm={() =>
                rotate.mutate(undefined, {
                  onSuccess: (made) =>
                    onSecret({
                      title: `New signing secret of ${made.webhook.url}`,
                      secret: made.webhook.secret,
                      note: rotationNote(made.webhook.previous_secret_expires_at)
                    })
                })}
            >
              Rotate secret
            </ConfirmButton>
          ) :
          null}
        <button
          type="button"
          className="danger"
          onClick={() => confirm(`Remove ${webhook.url}?`) && remove.mutate(undefined)}
        >
          Remove
        </button>
      </div>
      {test.data === undefined ? null : (
        <p className="test-result" role="status">
          Test delivery <Status value={test.data.status} />
          {test.data.last_status_code === null ? null : <>answered HTTP {test.data.last_status_code}</>}
          {test.data.last_error === null ? null : <>: {test.data.last_error}</>}
        </p>
      )}
      <ErrorNotice error={test.error ?? remove.error ?? rotate.error} />
      {isOwner ? <ResendSince orgId={orgId} webhook={webhook} /> : null}
    </li>
  )
}

type DeliveryRecord = typeof Delivery.json.Type

/**
 * Sent again and not tried since: the resend starts its attempts afresh, and the answer it
 * still holds is the one from before the resend.
 */
const resentNotTried = (d: DeliveryRecord) => d.status === "pending" && d.attempts === 0 && d.last_attempt_at !== null

/** Sends one event to its endpoint again, with the same event id (not while a try is due: the page says so). */
const ResendButton = ({ orgId, delivery }: { readonly orgId: OrgId; readonly delivery: DeliveryRecord }) => {
  const replay = useApiMutation(
    (c) => c.webhooks.replay({ path: { orgId, id: delivery.endpoint_id }, payload: { event_id: delivery.event_id } }),
    [["deliveries", orgId]]
  )
  const due = delivery.status === "pending"
  const why = `resend-why-${delivery.id}`
  return (
    <>
      <button
        type="button"
        className="secondary"
        disabled={replay.isPending || due}
        aria-describedby={due ? why : undefined}
        onClick={() => replay.mutate(undefined)}
      >
        {replay.isPending ? "Resending…" : "Resend"}
      </button>
      {due ? <span className="hint" id={why}>{" "}A try is due: it can be sent again once it is settled.</span> : null}
      {replay.isSuccess ? <span role="status" className="muted">{" "}Sent again</span> : null}
      <ErrorNotice error={replay.error} />
    </>
  )
}

/** The delivery's last answer, said of the try before the resend when none has been made since. */
const lastAnswer = (d: DeliveryRecord) => {
  const answer = d.last_status_code ?? d.last_error
  if (answer === null) return "—"
  return resentNotTried(d) ? `${answer} (before it was sent again)` : String(answer)
}

const Deliveries = ({ orgId, isOwner }: { readonly orgId: OrgId; readonly isOwner: boolean }) => {
  const pages = useCursorPages<WebhookDeliveryId>()
  const deliveries = useApiQuery(
    ["deliveries", orgId, pages.after],
    (c) => c.webhooks.deliveries({ path: { orgId }, urlParams: { limit: 20, starting_after: pages.after } }),
    { refetchInterval: 5000 }
  )
  return (
    <PagedTable
      query={deliveries}
      pages={pages}
      rows={(data) => data.deliveries}
      empty="No deliveries yet."
      head={["Event", "Status", "Attempts", "Last answer", "Next try", ...(isOwner ? ["Action"] : [])]}
      row={(d) => (
        <tr key={d.id} data-testid={`delivery-${d.id}`}>
          <td title={d.event_type}>{eventTitle(d.event_type)}</td>
          <td>
            <Status value={d.status} />
            {resentNotTried(d) ? " sent again" : null}
          </td>
          <td>{resentNotTried(d) ? "none since it was sent again" : d.attempts}</td>
          <td>{lastAnswer(d)}</td>
          <td>{d.next_attempt_at === null ? "—" : <When at={d.next_attempt_at} />}</td>
          {isOwner
            ? (
              <td>
                <ResendButton orgId={orgId} delivery={d} />
              </td>
            )
            : null}
        </tr>
      )}
    />
  )
}

const EventLog = ({ orgId }: { readonly orgId: OrgId }) => {
  const pages = useCursorPages()
  const events = useApiQuery(
    ["events", orgId, pages.after],
    (c) => c.events.list({ path: { orgId }, urlParams: { limit: 20, starting_after: pages.after } }),
    { refetchInterval: pages.after === undefined ? 5000 : false }
  )
  return (
    <Loaded query={events}>
      {(data) => (
        <>
          {data.events.length === 0 ? <Empty>No events yet.</Empty> : (
            <ul className="plain events">
              {data.events.map((event) => (
                <li key={event.id}>
                  <details>
                    <summary>
                      <span title={event.type}>{eventTitle(event.type)}</span> <When at={event.created_at} />
                    </summary>
                    <pre>{JSON.stringify(event.data, null, 2)}</pre>
                  </details>
                </li>
              ))}
            </ul>
          )}
          <Pager
            page={pages.page}
            hasMore={data.has_more}
            onPrevious={pages.previous}
            onNext={() => pages.next(data.events.at(-1)!.id)}
          />
        </>
      )}
    </Loaded>
  )
}

/** Webhook endpoints (secret shown once), test sends, deliveries, and the org's event log. */
export const WebhooksPage = () => {
  const org = useOrg()
  const webhooks = useApiQuery(["webhooks", org.id], (c) => c.webhooks.list({ path: { orgId: org.id } }))
  const secret = useSecretOnce(SECRET_SHOWN_MS)
  return (
    <div className="stack">
      <h1>Webhooks</h1>
      {secret.view}
      <Loaded query={webhooks}>
        {(data) => (
          <>
            {org.role === "owner"
              ? <NewWebhook orgId={org.id} eventTypes={data.event_types} onSecret={secret.show} />
              : null}
            {data.webhooks.length === 0 ?
              <Empty>No endpoints. Events are still kept in the log below.</Empty> :
              (
                <ul className="plain stack">
                  {data.webhooks.map((w) => (
                    <WebhookRow
                      key={w.id}
                      orgId={org.id}
                      webhook={w}
                      isOwner={org.role === "owner"}
                      onSecret={secret.show}
                    />
                  ))}
                </ul>
              )}
          </>
        )}
      </Loaded>
      <section className="card">
        <h2>Deliveries</h2>
        <Deliveries orgId={org.id} isOwner={org.role === "owner"} />
      </section>
      <section className="card">
        <h2>Event log</h2>
        <EventLog orgId={org.id} />
      </section>
    </div>
  )
}
