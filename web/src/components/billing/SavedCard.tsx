import type { OrgId } from "@agent-gateway/contract/Domain/Ids.js"
import { useQueryClient } from "@tanstack/react-query"
import { useEffect } from "react"
import { useSearchParams } from "react-router"
import { useApiMutation, useApiQuery } from "../../api/hooks.js"
import { ErrorNotice, Spinner } from "../ui.js"

/**
 * Add or replace the card kept for automatic reloads: the owner is sent to the secure
 * payment page to give it (nothing is charged) and comes back here (`?card_setup=...`),
 * where the page says whether it was saved.
 */
export const SavedCard = ({ orgId, hasCard }: { readonly orgId: OrgId; readonly hasCard: boolean }) => {
  const [search, setSearch] = useSearchParams()
  const returned = search.get("card_setup") !== null
  const queryClient = useQueryClient()
  const start = useApiMutation((c) => c.billing.cardSetup({ path: { orgId } }))
  const finished = useApiQuery(
    ["card-setup-return", orgId, search.get("card_setup")],
    (c) => c.billing.cardSetupConfirm({ path: { orgId } }),
    { enabled: returned, once: true }
  )
  const status = finished.data?.status
  useEffect(() => {
    if (status !== undefined) void queryClient.invalidateQueries({ queryKey: ["billing", orgId] })
  }, [status, orgId, queryClient])
  const leaving = start.isSuccess && start.data.checkout_url !== null
  return (
    <div className="stack" aria-label="Saved card">
      {returned
        ? (
          <div className="notice" role="status">
            {finished.error
              ? <ErrorNotice error={finished.error} />
              : finished.data === undefined
              ? <Spinner label="Checking the card" />
              : finished.data.status === "saved" && finished.data.card !== null
              ? `Card saved: ${finished.data.card.brand} ending in ${finished.data.card.last4}.`
              : "The card was not saved."}{" "}
            <button
              type="button"
              className="secondary"
              onClick={() => {
                search.delete("card_setup")
                setSearch(search, { replace: true })
              }}
            >
              Done
            </button>
          </div>
        )
        : null}
      <div className="actions">
        <button
          type="button"
          className="secondary"
          disabled={start.isPending || leaving}
          onClick={() =>
            start.mutate(undefined, {
              onSuccess: (setup) => {
                if (setup.checkout_url !== null) window.location.assign(setup.checkout_url)
              }
            })}
        >
          {leaving ? "Opening the payment page…" : hasCard ? "Replace the card" : "Add a card"}
        </button>
      </div>
      <ErrorNotice error={start.error} />
    </div>
  )
}
