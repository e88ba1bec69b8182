import type { OrgId } from "@agent-gateway/contract/Domain/Ids.js"
import { useApiMutation } from "../../api/hooks.js"
import { ErrorNotice } from "../ui.js"

/**
 * Manage billing: the payment provider's own page (or the sandbox's in development) where
 * the owner replaces or removes the card, sees invoices and receipts, and cancels the plan.
 */
export const ManageBilling = ({ orgId }: { readonly orgId: OrgId }) => {
  const open = useApiMutation((c) => c.billing.portal({ path: { orgId } }))
  return (
    <div className="stack">
      <p>
        <button
          type="button"
          className="secondary"
          disabled={open.isPending || open.isSuccess}
          onClick={() => open.mutate(undefined, { onSuccess: (answer) => window.location.assign(answer.portal_url) })}
        >
          Manage billing: card, invoices, cancel the plan
        </button>
      </p>
      <ErrorNotice error={open.error} />
    </div>
  )
}
