import type { ReactNode } from "react"
import type { useCursorPages } from "../api/hooks.js"
import { TableFrame } from "./TableFrame.js"
import { Empty, Loaded, Pager } from "./ui.js"

/**
 * Rows under their column titles, or `empty` when there are none; scrolls sideways when
 * narrow, or with `stackOnPhone` stacks its rows (TableFrame). `label` names its region, once
 * per page. An empty title (a column of buttons) is read as "Actions".
 */
export function Table<Row>({ empty, head, label = "Scrollable table", row, rows, stackOnPhone }: {
  readonly rows: ReadonlyArray<Row>
  readonly head: ReadonlyArray<string>
  readonly row: (row: Row) => ReactNode
  readonly empty?: string
  readonly label?: string | undefined
  readonly stackOnPhone?: boolean | undefined
}) {
  return rows.length === 0 && empty !== undefined ?
    <Empty>{empty}</Empty> :
    (
      <TableFrame label={label} stackOnPhone={stackOnPhone}>
        <table>
          <thead>
            <tr>
              {head.map((title, i) => (
                <th key={i}>{title === "" ? <span className="visually-hidden">Actions</span> : title}</th>
              ))}
            </tr>
          </thead>
          <tbody>{rows.map(row)}</tbody>
        </table>
      </TableFrame>
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
  { empty, head, label, pages, query, row, rows, stackOnPhone }: {
    readonly query: { readonly data?: Data | undefined; readonly error: unknown; readonly isPending: boolean }
    readonly pages: ReturnType<typeof useCursorPages<Id>>
    readonly rows: (data: Data) => ReadonlyArray<Row>
    readonly head: ReadonlyArray<string>
    readonly row: (row: Row) => ReactNode
    readonly empty: string
    readonly label?: string | undefined
    readonly stackOnPhone?: boolean | undefined
  }
) {
  return (
    <Loaded query={query}>
      {(data) => {
        const items = rows(data)
        return (
          <>
            <Table
              rows={items}
              head={head}
              row={row}
              empty={empty}
              label={label}
              stackOnPhone={stackOnPhone}
            />
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
