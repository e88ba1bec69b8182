import type { OrgId, ReceiptId } from "@agent-gateway/contract/Domain/Ids.js"
import { amountOf } from "@agent-gateway/contract/Domain/Money.js"
import { useState } from "react"
import { Link, useParams } from "react-router"
import { useApiMutation, useApiQuery, useCursorPages } from "../api/hooks.js"
import { useOrg } from "../api/org.js"
import { ExportPanel } from "../components/Export.js"
import { PagedTable, Table } from "../components/PagedTable.js"
import { ReceiptItems } from "../components/ReceiptItems.js"
import { Credits, ErrorNotice, Loaded, Status, TestNote, When } from "../components/ui.js"

const DisputeItem = (
  { orgId, receiptId, index }: { readonly orgId: OrgId; readonly receiptId: ReceiptId; readonly index: number }
) => {
  const [reason, setReason] = useState("")
  const [open, setOpen] = useState(false)
  const dispute = useApiMutation(
    (c) =>
      c.orgPurchasing.openDispute({
        path: { orgId },
        payload: { receipt_id: receiptId, item_index: index, reason: reason || undefined }
      }),
    [["disputes", orgId]]
  )
  if (dispute.isSuccess) {
    return (
      <span>
        Dispute opened: <Status value={dispute.data.dispute.status} />
      </span>
    )
  }
  if (!open) return <button type="button" className="secondary small" onClick={() => setOpen(true)}>Dispute</button>
  return (
    <form
      className="inline"
      onSubmit={(event) => {
        event.preventDefault()
        dispute.mutate(undefined)
      }}
    >
      <label>
        What is wrong?
        <input value={reason} onChange={(e) => setReason(e.target.value)} maxLength={2000} />
      </label>
      <button type="submit" disabled={dispute.isPending}>Open dispute</button>
      <ErrorNotice error={dispute.error} />
    </form>
  )
}

/**
 * One receipt: its items, each with its outcome, cost, check and (when charged) a dispute
 * button; below, their inputs and results.
 */
/** "1 item", "3 items". */
const itemsText = (count: number) => `${count} item${count === 1 ? "" : "s"}`

export const ReceiptDetail = ({ orgId, receiptId }: { readonly orgId: OrgId; readonly receiptId: string }) => {
  const receipt = useApiQuery(
    ["receipt", orgId, receiptId],
    // The address's id as the contract's; the request's encoding checks it is a UUID.
    (c) => c.orgPurchasing.receipt({ path: { orgId, id: receiptId as ReceiptId } }),
    {
      refetchInterval: (data) => data?.receipt.status === "running" ? 1000 : false
    }
  )
  const disputes = useApiQuery(
    ["disputes", orgId],
    (c) => c.orgPurchasing.disputes({ path: { orgId }, urlParams: { limit: 200 } })
  )
  // What each published check verifies, in words (the tools list names it; the item names the check's id).
  const tools = useApiQuery(["tools"], (c) => c.public.tools())
  const checkWords = new Map(
    (tools.data?.tools ?? []).map((tool) => [`${tool.check.id}@${tool.check.version}`, tool.check.verifies])
  )
  const disputeOf = new Map(
    (disputes.data?.disputes ?? []).filter((d) => d.receipt_id === receiptId).map((d) => [d.item_index, d])
  )
  return (
    <Loaded query={receipt}>
      {({ receipt: r }) => (
        <section className="card stack" aria-label="Receipt">
          <h2>
            {r.tool.name} <Status value={r.status} /> {r.mode === "test" ? <TestNote /> : <Status value={r.mode} />}
          </h2>
          {r.mode === "test"
            ? (
              <p data-testid="receipt-money">
                A test purchase: {itemsText(r.item_count)} priced at <Credits amount={amountOf(r.price_credits)} />{" "}
                each, in all <Credits amount={amountOf(r.charged_credits)} />. No credits moved. Bought{" "}
                <When at={r.created_at} />.
              </p>
            )
            : (
              <p data-testid="receipt-money">
                {itemsText(r.item_count)} at <Credits amount={amountOf(r.price_credits)} /> each; charged{" "}
                <Credits amount={amountOf(r.charged_credits)} />, refunded{" "}
                <Credits amount={amountOf(r.refunded_credits)} />. Bought <When at={r.created_at} />.
              </p>
            )}
          <Table
            rows={r.items}
            head={["#", "Outcome", r.mode === "test" ? "Priced" : "Cost", "Check", "Reason", "Dispute"]}
            row={(item) => {
              const dispute = disputeOf.get(item.idx)
              return (
                <tr key={item.idx}>
                  <td>{item.idx + 1}</td>
                  <td>
                    <Status value={item.status} />
                  </td>
                  <td>
                    <Credits amount={amountOf(item.cost_credits)} />
                  </td>
                  <td>
                    {item.check === null ? "—" : (
                      <small title={`${item.check.id}@${item.check.version}`}>
                        {checkWords.get(`${item.check.id}@${item.check.version}`) ??
                          "Checked by the tool's published check"}
                      </small>
                    )}
                  </td>
                  <td>{item.reason ?? ""}</td>
                  <td>
                    {dispute !== undefined
                      ? (
                        <span>
                          <Status value={dispute.status} />
                          {dispute.note === null ? null : ` ${dispute.note}`}
                        </span>
                      )
                      : item.charged
                      ? <DisputeItem orgId={orgId} receiptId={r.id} index={item.idx} />
                      : null}
                  </td>
                </tr>
              )
            }}
          />
          <ReceiptItems orgId={orgId} receiptId={r.id} mode={r.mode} running={r.status === "running"} />
        </section>
      )}
    </Loaded>
  )
}

/** Receipts, newest first, by pages; one opens with its items. */
export const ReceiptsPage = () => {
  const org = useOrg()
  const { receiptId } = useParams()
  const pages = useCursorPages<ReceiptId>()
  const receipts = useApiQuery(
    ["receipts", org.id, pages.after],
    (c) => c.orgPurchasing.receipts({ path: { orgId: org.id }, urlParams: { limit: 20, starting_after: pages.after } }),
    { refetchInterval: pages.after === undefined ? 5000 : false }
  )
  const agents = useApiQuery(
    ["agents", org.id],
    (c) => c.agents.list({ path: { orgId: org.id }, urlParams: { limit: 200 } })
  )
  const names = new Map((agents.data?.agents ?? []).map((a) => [a.id, a.name]))
  return (
    <div className="stack">
      <h1>Receipts</h1>
      {receiptId === undefined ? null : <ReceiptDetail orgId={org.id} receiptId={receiptId} />}
      <ExportPanel orgId={org.id} dataset="receipts" />
      <PagedTable
        query={receipts}
        pages={pages}
        rows={(data) => data.receipts}
        empty="No purchases yet."
        head={["Tool", "Agent", "Items", "Charged", "Status", "When"]}
        row={(r) => (
          <tr key={r.id} data-mode={r.mode}>
            <td>
              <Link to={`/orgs/${org.id}/receipts/${r.id}`}>{r.tool.name}</Link>
            </td>
            <td>{names.get(r.agent_id) ?? `agent ${r.agent_id.slice(0, 8)}`}</td>
            <td>{r.item_count}</td>
            <td>
              {r.mode === "test" ?
                (
                  <>
                    <TestNote />{" "}
                    <small>
                      priced <Credits amount={amountOf(r.charged_credits)} />
                    </small>
                  </>
                ) :
                <Credits amount={amountOf(r.charged_credits)} />}
            </td>
            <td>
              <Status value={r.status} />
            </td>
            <td>
              <When at={r.created_at} />
            </td>
          </tr>
        )}
      />
    </div>
  )
}
