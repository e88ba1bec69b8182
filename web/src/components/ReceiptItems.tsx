import type { OrgId, ReceiptId } from "@agent-gateway/contract/Domain/Ids.js"
import { useApiQuery, useCursorPages } from "../api/hooks.js"
import { Loaded, Pager, Status, TestNote } from "./ui.js"

/** Longer than this (as JSON), a value is folded away behind its summary. */
const SHORT_JSON = 400

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A value as an owner reads it: an object as its fields (nested values as JSON), anything else as JSON. */
const Fields = ({ value }: { readonly value: unknown }) =>
  isObject(value) && Object.keys(value).length > 0
    ? (
      <dl className="item-fields">
        {Object.entries(value).map(([name, field]) => [
          <dt key={`${name}-name`}>{name.replace(/_/g, " ")}</dt>,
          <dd key={`${name}-value`}>
            {field === null
              ? <span className="muted">none</span>
              : typeof field === "object"
              ? <code>{JSON.stringify(field)}</code>
              : String(field)}
          </dd>
        ])}
      </dl>
    )
    : <code>{JSON.stringify(value)}</code>

/** A short value in full; a long one collapsed, its JSON shown on demand. */
const JsonValue = ({ value, what }: { readonly value: unknown; readonly what: string }) => {
  const json = JSON.stringify(value, null, 2)
  if (JSON.stringify(value).length <= SHORT_JSON) return <Fields value={value} />
  const size = Array.isArray(value)
    ? `${value.length} entries`
    : isObject(value)
    ? `${Object.keys(value).length} fields`
    : `${json.length} characters`
  return (
    <details className="item-json">
      <summary>
        {what} ({size}): show JSON
      </summary>
      {/* Focusable, so a keyboard can scroll a long answer. */}
      <pre tabIndex={0} aria-label={`${what} as JSON`}>{json}</pre>
    </details>
  )
}

/**
 * A receipt's items with the input the agent sent and the result it got, a page at a time
 * (the list is not part of the signed receipt; results are kept 30 days).
 */
export const ReceiptItems = ({ orgId, receiptId, mode, running }: {
  readonly orgId: OrgId
  readonly receiptId: ReceiptId
  readonly mode: "test" | "live"
  readonly running: boolean
}) => {
  const pages = useCursorPages()
  const items = useApiQuery(
    ["receipt-items", orgId, receiptId, pages.after],
    (c) =>
      c.orgPurchasing.receiptItems({
        path: { orgId, id: receiptId },
        urlParams: { limit: 20, starting_after: pages.after }
      }),
    { refetchInterval: running ? 1000 : false }
  )
  return (
    <section className="stack" aria-label="Inputs and results">
      <h3>Inputs and results</h3>
      {mode === "test"
        ? (
          <p data-testid="receipt-items-test">
            <TestNote />{" "}
            A test purchase: its results come from the tool's mock and show the shape of a real answer; they are not
            real data.
          </p>
        )
        : null}
      <Loaded query={items}>
        {(data) => (
          <>
            <ol className="plain receipt-items">
              {data.items.map((item) => (
                <li key={item.idx} className="card" data-testid={`receipt-item-${item.idx}`}>
                  <p>
                    Item {item.idx + 1} <Status value={item.status} />
                    {mode === "test" ? <span className="badge badge-test">test</span> : null}
                  </p>
                  <h4>Input</h4>
                  <JsonValue value={item.input} what="Input" />
                  <h4>{mode === "test" ? "Result (test)" : "Result"}</h4>
                  {item.result !== null
                    ? <JsonValue value={item.result} what="Result" />
                    : (
                      <p className="muted">
                        {item.charged
                          ? "No longer kept (results are kept 30 days; the receipt keeps its hash)."
                          : item.reason ?? "No result: nothing was charged."}
                      </p>
                    )}
                </li>
              ))}
            </ol>
            <Pager
              page={pages.page}
              hasMore={data.has_more}
              onPrevious={pages.previous}
              onNext={() => pages.next(String(data.items.at(-1)!.idx))}
            />
          </>
        )}
      </Loaded>
    </section>
  )
}
