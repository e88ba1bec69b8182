import { type ReactNode, type Ref, useCallback, useEffect, useRef, useState } from "react"
import { ApiError } from "../api/client.js"
import { credits, dollars, localDate, localDateTime, ownerText, utcText } from "./format.js"

/**
 * The service's messages are written for API callers; a few name an endpoint or a field.
 * On an owner's page those say what to do here instead.
 */
const ownerWords: Record<string, string> = {
  phone_unverified: "Verify your phone number first (on your account page), then create the org.",
  live_execute_unavailable: "Live purchases are closed for now: use a test agent; no credits move.",
  trial_limit: "The trial allows 50 credits of spend an hour until the org's first top-up. Add credits to lift it.",
  insufficient_credits: "The org's balance is too low for this. Add credits on the Billing page."
}

/** An error as the service said it: its message and a link to its documentation. */
export const ErrorNotice = ({ error }: { readonly error: unknown }) => {
  if (error === null || error === undefined) return null
  const apiError = error instanceof ApiError ? error : null
  return (
    <div className="error" role="alert">
      <span>
        {(apiError ? ownerWords[apiError.code] : undefined) ??
          ownerText(apiError?.message ?? String((error as Error).message ?? error))}
      </span>
      {apiError?.docUrl ? <a href={apiError.docUrl} target="_blank" rel="noreferrer">What this means</a> : null}
    </div>
  )
}

export const Spinner = ({ label = "Loading" }: { readonly label?: string }) => (
  <div className="spinner" role="status" aria-live="polite">
    <span className="spin" aria-hidden="true" />
    {label}…
  </div>
)

/** A read's three states in one place: waiting, refused, or its data. */
export function Loaded<A>({ children, query }: {
  readonly query: { readonly data?: A | undefined; readonly error: unknown; readonly isPending: boolean }
  readonly children: (data: A) => ReactNode
}) {
  if (query.error) return <ErrorNotice error={query.error} />
  if (query.isPending || query.data === undefined) return <Spinner />
  return <>{children(query.data)}</>
}

export const Credits = ({ amount }: { readonly amount: { readonly credits: string; readonly usd: string } }) => (
  <span className="money" title={`${credits(amount.credits)} credits = ${dollars(amount.usd)}`}>
    {credits(amount.credits)} cr <small>({dollars(amount.usd)})</small>
  </span>
)

/** An instant in the viewer's time zone; the UTC instant on hover. A record's Date or the wire's ISO text. */
export const When = ({ at, dateOnly = false }: { readonly at: Date | string | null; readonly dateOnly?: boolean }) => {
  if (at === null) return <span className="muted">never</span>
  const iso = at instanceof Date ? at.toISOString() : at
  return <time dateTime={iso} title={utcText(iso)}>{dateOnly ? localDate(iso) : localDateTime(iso)}</time>
}

/** Where live mode is offered and where credits are sold, while live purchases are closed. */
export const LiveClosedNotice = () => (
  <p className="notice" role="note" data-testid="live-closed">
    Live purchases are closed for now: a live agent's tool purchases are refused and nothing is charged. Its gateway
    calls to provider APIs work and spend credits; test agents rehearse purchases without moving credits.
  </p>
)

/**
 * Under the balance, until the org's first top-up: the trial's hourly cap, what this hour
 * spent of it, and when the trial's credits end.
 */
export const TrialTerms = ({ usage, showEnd = true }: {
  readonly showEnd?: boolean
  readonly usage: {
    readonly trial_limit: {
      readonly per_hour: { readonly credits: string; readonly usd: string }
      readonly spent_this_hour: { readonly credits: string; readonly usd: string }
      readonly resets_at: string
    } | null
    readonly trial: { readonly expires_at: string; readonly expired: boolean } | null
  }
}) =>
  usage.trial_limit === null ? null : (
    <span className="muted" data-testid="trial-terms">
      Trial: at most {credits(usage.trial_limit.per_hour.credits)} cr of spend an hour until the first top-up;{" "}
      {credits(usage.trial_limit.spent_this_hour.credits)} spent this hour.
      {!showEnd || usage.trial === null ? null : usage.trial.expired ? " The trial's credits have expired." : (
        <>
          {" "}Trial credits end <When at={usage.trial.expires_at} dateOnly />.
        </>
      )}
    </span>
  )

/** Test activity is priced but moves no credits: said wherever its amounts show. */
export const TestNote = () => <span className="badge badge-test">test: no credits moved</span>

const remaining = (until: string, now: number) => {
  const seconds = Math.max(0, Math.round((Date.parse(until) - now) / 1000))
  const h = Math.floor(seconds / 3600)
  const m = Math.floor((seconds % 3600) / 60)
  const s = seconds % 60
  return seconds === 0 ? "expired" : h > 0 ? `${h} h ${m} min` : `${m} min ${s} s`
}

/** A ticking clock. */
export const useNow = (everyMs = 1000) => {
  const [now, setNow] = useState(Date.now())
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs)
    return () => clearInterval(timer)
  }, [everyMs])
  return now
}

export const Countdown = ({ until }: { readonly until: string }) => {
  const now = useNow()
  return <span className="countdown">{remaining(until, now)}</span>
}

export const CopyButton = ({ text, label = "Copy", ref }: {
  readonly text: string
  readonly label?: string
  readonly ref?: Ref<HTMLButtonElement>
}) => {
  const [copied, setCopied] = useState(false)
  return (
    <button
      ref={ref}
      type="button"
      className="secondary"
      onClick={() =>
        navigator.clipboard.writeText(text).then(() => {
          setCopied(true)
          setTimeout(() => setCopied(false), 2000)
        })}
    >
      {copied ? "Copied" : label}
    </button>
  )
}

/**
 * A secret shown once, with a copy button, gone after `hideAfterMs` (the service cannot show it
 * again). The copy button takes the focus when it appears: the next key press copies, with no
 * tabbing through the navigation before it runs out.
 */
export const SecretOnce = ({ title, secret, note, hideAfterMs, onDone }: {
  readonly title: string
  readonly secret: string
  readonly note: string
  readonly hideAfterMs: number
  readonly onDone: () => void
}) => {
  const [shownAt] = useState(Date.now())
  const now = useNow()
  const copy = useRef<HTMLButtonElement>(null)
  useEffect(() => copy.current?.focus(), [])
  const left = shownAt + hideAfterMs - now
  useEffect(() => {
    if (left <= 0) onDone()
  }, [left, onDone])
  return (
    <div className="secret" role="region" aria-label={title}>
      <h3>{title}</h3>
      <p>{note}</p>
      <div className="row">
        <code className="secret-value" data-testid="secret-value">{secret}</code>
        <CopyButton text={secret} ref={copy} />
      </div>
      <p className="muted">
        Hidden in {Math.max(0, Math.ceil(left / 1000))} s.{" "}
        <button type="button" className="link" onClick={onDone}>Hide now</button>
      </p>
    </div>
  )
}

/**
 * What the dashboard says under a key shown once, in an owner's words (the API's own note
 * speaks of how it is stored).
 */
export const AGENT_KEY_NOTE =
  "Copy this key into your agent now: it is shown only this once and cannot be shown again. If it is lost, rotate the key to get a new one."
export const ORG_KEY_NOTE =
  "Copy this key now: it is shown only this once and cannot be shown again. It acts as you, with your current role, and stops working if you leave the org."

/** What a secret shown once says: its title, the value, and the service's note about keeping it. */
export interface ShownSecret {
  readonly title: string
  readonly secret: string
  readonly note: string
}

/** A secret to show once: `show` puts it on screen, `view` is its panel (nothing once hidden). */
export const useSecretOnce = (hideAfterMs: number) => {
  const [shown, setShown] = useState<ShownSecret | null>(null)
  const hide = useCallback(() => setShown(null), [])
  const view = shown === null
    ? null
    : <SecretOnce key={shown.secret} {...shown} hideAfterMs={hideAfterMs} onDone={hide} />
  return { show: setShown, view } as const
}

export const ProgressBar = (
  { done, total, label }: { readonly done: number; readonly total: number; readonly label: string }
) => (
  <div
    className="progress"
    role="progressbar"
    aria-label={label}
    aria-valuemin={0}
    aria-valuemax={total}
    aria-valuenow={done}
  >
    <div className="progress-fill" style={{ width: `${total === 0 ? 0 : (100 * done) / total}%` }} />
    <span>{done} / {total}</span>
  </div>
)

/** Next and previous for a cursor list. */
export const Pager = ({ page, hasMore, onNext, onPrevious }: {
  readonly page: number
  readonly hasMore: boolean
  readonly onNext: () => void
  readonly onPrevious: () => void
}) =>
  page === 1 && !hasMore ? null : (
    <nav className="pager" aria-label="Pages">
      <button type="button" className="secondary" disabled={page === 1} onClick={onPrevious}>Previous</button>
      <span>Page {page}</span>
      <button type="button" className="secondary" disabled={!hasMore} onClick={onNext}>Next</button>
    </nav>
  )

export const Empty = ({ children }: { readonly children: ReactNode }) => <p className="empty">{children}</p>

/** Status words an owner reads (the API's codes, where they differ). */
const statusWords: Record<string, string> = {
  information_only: "listed, not sold",
  timed_out: "timed out",
  over_threshold: "above approval threshold",
  over_budget: "over monthly budget"
}

export const Status = ({ value }: { readonly value: string }) => (
  <span className={`badge badge-${value}`}>{statusWords[value] ?? value.replace(/_/g, " ")}</span>
)
