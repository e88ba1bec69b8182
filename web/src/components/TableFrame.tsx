import { type ReactNode, useLayoutEffect, useRef } from "react"

/**
 * The frame of a table: a labelled region, focusable so a keyboard can scroll a table wider
 * than the screen. With `stackOnPhone`, at phone width each row is a card instead, each cell
 * under its column's title (copied from the header into `data-label`), so nothing scrolls
 * sideways.
 */
export const TableFrame = ({ children, label, stackOnPhone = false }: {
  readonly children: ReactNode
  /** The region's name: unique on its page (two regions of one name are one landmark twice). */
  readonly label: string
  readonly stackOnPhone?: boolean | undefined
}) => {
  const frame = useRef<HTMLDivElement>(null)
  // After every render: rows come and go with the data.
  useLayoutEffect(() => {
    if (!stackOnPhone || frame.current === null) return
    for (const table of frame.current.querySelectorAll("table")) {
      // A column whose title is only for screen readers (a button's column) gets no label.
      const titles = Array.from(
        table.querySelectorAll("thead th"),
        (th) => th.querySelector(".visually-hidden") === null ? th.textContent?.trim() ?? "" : ""
      )
      for (const row of table.querySelectorAll("tbody tr")) {
        Array.from(row.children).forEach((cell, index) => {
          const title = titles[index] ?? ""
          if (title === "") cell.removeAttribute("data-label")
          else cell.setAttribute("data-label", title)
        })
      }
    }
  })
  return (
    <div
      ref={frame}
      className={stackOnPhone ? "table-scroll stack-on-phone" : "table-scroll"}
      tabIndex={0}
      role="region"
      aria-label={label}
    >
      {children}
    </div>
  )
}
