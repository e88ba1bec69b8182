import type { ReactNode } from "react"
import type { useCursorPages } from "../api/hooks.js"
import { Empty, Loaded, Pager } from "./ui.js"

/** Rows under their column titles, or `empty` when there are none; scrolls sideways when narrow. */
export function Table<Row>({ empty, head, row, rows }: {
  readonly rows: ReadonlyArray<Row>
  readonly head: ReadonlyArray<string>
  readonly row: (row: Row) => ReactNode
  readonly empty?: string
}) {
  return rows.length === 0 && empty !== undefined ? <Empty>{empty}</Empty> : (
    // Focusable, so a keyboard can scroll a table wider than a phone.
    <div className="table-scroll" tabIndex={0} role="region" aria-label="Scrollable table">
      <table>
        <thead>
          <tr>{head.map((title, i) => <th key={i}>{title}</th>)}</tr>
        </thead>
        <tbody>{rows.map(row)}</tbody>
      </table>
    </div>
  )
}

/**
 * A list the API pages with `starting_after`, as a table: waiting, refused, empty, or its
 * rows with Previous and Next (the cursor is the last row's id).
 */
export function PagedTable<
  Data extends { readonly has_more: boolean },
  Row extends { readonly id: Id },
  Id extends string = string
>(
  { empty, head, pages, query, row, rows }: {
    readonly query: { readonly data?: Data | undefined; readonly error: unknown; readonly isPending: boolean }
    readonly pages: ReturnType<typeof useCursorPages<Id>>
    readonly rows: (data: Data) => ReadonlyArray<Row>
    readonly head: ReadonlyArray<string>
    readonly row: (row: Row) => ReactNode
    readonly empty: string
  }
) {
  return (
    <Loaded query={query}>
      {(data) => {
        const items = rows(data)
        return (
          <>
            <Table rows={items} head={head} row={row} empty={empty} />
            <Pager
              page={pages.page}
              hasMore={data.has_more}
              onPrevious={pages.previous}
              onNext={() => pages.next(items.at(-1)!.id)}
            />
          </>
        )
      }}
    </Loaded>
  )
}
