import { type ReactNode, useRef } from "react"

/**
 * A button whose action is asked about first, in the page (a modal `<dialog>`: the focus
 * stays in it, Escape cancels, and the focus comes back to the button), never with the
 * browser's `confirm()`, which looks like another site's and cannot be styled or read in
 * the page's words.
 */
export const ConfirmButton = ({ children, className, confirmLabel, disabled, onConfirm, question }: {
  readonly children: ReactNode
  /** The question, in the page's words: what happens, and what stops working. */
  readonly question: string
  /** The dialog's button that goes ahead ("Disconnect", "Rotate secret"). */
  readonly confirmLabel: string
  readonly onConfirm: () => void
  readonly className?: string
  readonly disabled?: boolean
}) => {
  const dialog = useRef<HTMLDialogElement>(null)
  return (
    <>
      <button type="button" className={className} disabled={disabled} onClick={() => dialog.current?.showModal()}>
        {children}
      </button>
      <dialog ref={dialog} className="confirm" aria-label={confirmLabel}>
        <form
          method="dialog"
          className="stack"
          onSubmit={(event) => {
            const submitter = (event.nativeEvent as SubmitEvent).submitter as HTMLButtonElement | null
            if (submitter?.value === "confirm") onConfirm()
          }}
        >
          <p>{question}</p>
          <div className="actions">
            <button type="submit" value="confirm" className={className === "danger" ? "danger" : undefined}>
              {confirmLabel}
            </button>
            <button type="submit" value="cancel" className="secondary" autoFocus>Cancel</button>
          </div>
        </form>
      </dialog>
    </>
  )
}
