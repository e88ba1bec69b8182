import * as http from "node:http"
import type { TaskTypeId } from "../../src/Domain/TaskType.js"
import { mockAnswer } from "../../src/Services/Purchasing/MockTools.js"

/**
 * A fake of the tools' providers for live purchases (PROVIDERS_UPSTREAM): live purchases go
 * through the same forwarder as the gateway, with the provider's credential. The fake
 * answers each tool's endpoint with a result in the task type's canonical shape under
 * `data`; markers in the input make it fail (`live-down`, 500), hang (`live-hang`), refuse
 * (`live-refuse`, 404) or fail once (`live-flaky`).
 */
export interface Seen {
  readonly method: string
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

const routes: Record<string, { slug: string; provider: string; task_type: TaskTypeId; check_id: string }> = {
  "/hunter/v2/email-finder": {
    slug: "hunter-email-finder",
    provider: "hunter",
    task_type: "email_find",
    check_id: "email_find.deliverable_address"
  },
  "/firecrawl/v2/scrape": {
    slug: "firecrawl-scrape",
    provider: "firecrawl",
    task_type: "web_extract",
    check_id: "web_extract.main_text"
  }
}

/** The tools' providers on loopback (PROVIDERS_UPSTREAM), for live purchases. */
export const startFakeToolProvider = async () => {
  const seen: Array<Seen> = []
  const failedOnce = new Set<string>()
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8")
      seen.push({ method: req.method ?? "GET", url: req.url ?? "/", headers: req.headers, body })
      const url = new URL(req.url ?? "/", "http://fake")
      const input: Record<string, string> = req.method === "GET"
        ? Object.fromEntries([...url.searchParams.entries()].filter(([key]) => key !== "api_key"))
        : JSON.parse(body || "{}")
      const text = Object.values(input).join(" ")
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { "content-type": "application/json" })
        res.end(JSON.stringify(value))
      }
      const route = routes[url.pathname]
      if (route === undefined) return json(404, { error: "no such endpoint" })
      if (text.includes("live-hang")) return
      if (text.includes("live-down")) return json(500, { error: "upstream exploded" })
      if (text.includes("live-refuse")) return json(404, { error: "no such person" })
      if (text.includes("live-flaky") && !failedOnce.has(text)) {
        failedOnce.add(text)
        return json(503, { error: "try again" })
      }
      const answer = mockAnswer(route, input, 1)
      return json(200, { data: answer._tag === "Answer" ? answer.result : null, request_id: "r-1" })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
