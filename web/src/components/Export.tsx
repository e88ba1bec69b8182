import { useState } from "react"

type Dataset = "calls" | "receipts" | "ledger" | "usage"

const todayUtc = () => new Date().toISOString().slice(0, 10)
const monthStartUtc = () => `${todayUtc().slice(0, 7)}-01`

const describe: Record<Dataset, string> = {
  calls: "gateway calls",
  receipts: "receipts, one row per item with its input and result",
  ledger: "balance entries",
  usage: "spend, test activity and refusals per agent per day"
}

/**
 * A download of the org's rows over a range of days (UTC, as the API counts them), as CSV or
 * JSON Lines. A plain link: the browser streams the file with the session cookie.
 */
export const ExportPanel = ({ orgId, dataset }: { readonly orgId: string; readonly dataset: Dataset }) => {
  const [from, setFrom] = useState(monthStartUtc)
  const [to, setTo] = useState(todayUtc)
  const [format, setFormat] = useState<"csv" | "jsonl">("csv")
  const query = new URLSearchParams({ from, to, format })
  return (
    <details className="card export">
      <summary>Download {describe[dataset]}</summary>
      <form className="inline" aria-label={`Download ${dataset}`} onSubmit={(e) => e.preventDefault()}>
        <label>
          First day (UTC)
          <input type="date" value={from} onChange={(e) => setFrom(e.target.value)} required />
        </label>
        <label>
          Last day (UTC)
          <input type="date" value={to} onChange={(e) => setTo(e.target.value)} required />
        </label>
        <label>
          Format
          <select value={format} onChange={(e) => setFormat(e.target.value as "csv" | "jsonl")}>
            <option value="csv">CSV (spreadsheets)</option>
            <option value="jsonl">JSON Lines</option>
          </select>
        </label>
        <a className="button" href={`/v1/orgs/${orgId}/exports/${dataset}?${query.toString()}`} download>
          Download
        </a>
      </form>
    </details>
  )
}
