import { hash } from "node:crypto"
import type { TaskTypeId } from "../../Domain/TaskType.js"
import { canonicalJson } from "./Canonical.js"
import type { ItemInput } from "./Checks.js"

/**
 * Mock tools for test agents: deterministic results in the canonical shape of the task
 * type (what the published checks read), so every path of a purchase can be rehearsed
 * without a provider. The same tool and input always give the same result.
 *
 * Markers in any input value (case-insensitive) choose a path:
 *   `mock-fail`              a result that fails the tool's check (not charged)
 *   `mock-partial`           a partial result (charged)
 *   `mock-provider-error`    every provider fails, on the first try and the retry
 *   `mock-down-<provider>`   only that provider fails (e.g. `mock-down-hunter`), so
 *                            `fallback: true` can move the item to the next tool
 *   `mock-flaky`             the first try fails, the retry succeeds
 * Anything else gives a result that passes.
 */
export interface MockTool {
  readonly slug: string
  readonly provider: string
  readonly task_type: TaskTypeId
  readonly check_id: string
}

export type MockAnswer =
  | { readonly _tag: "Answer"; readonly result: unknown }
  | { readonly _tag: "ProviderFailure"; readonly reason: string }

type Mode = "pass" | "fail" | "partial"

const markersOf = (input: ItemInput): string =>
  Object.values(input).filter((value): value is string => typeof value === "string").join(" ").toLowerCase()

/** An input's canonical text, made once per input however many numbers are drawn from it. */
const canonicalInputs = new WeakMap<ItemInput, string>()
const canonicalInput = (input: ItemInput): string => {
  let text = canonicalInputs.get(input)
  if (text === undefined) {
    text = canonicalJson(input)
    canonicalInputs.set(input, text)
  }
  return text
}

/** A number in [0, modulo) fixed by the tool and the input. */
const seeded = (tool: MockTool, input: ItemInput, salt: string, modulo: number): number =>
  hash("sha256", `${tool.slug}|${salt}|${canonicalInput(input)}`, "buffer").readUInt32BE(0) % modulo

const pick = <A>(tool: MockTool, input: ItemInput, salt: string, options: ReadonlyArray<A>): A =>
  options[seeded(tool, input, salt, options.length)]!

const slugify = (value: unknown) => String(value ?? "").toLowerCase().replace(/[^a-z0-9]+/g, "")
const capitalize = (word: string) => (word.length === 0 ? word : word[0]!.toUpperCase() + word.slice(1))
const domainOf = (value: unknown) =>
  String(value ?? "").trim().toLowerCase().replace(/^[a-z]+:\/\//, "").replace(/[/?#].*$/, "").replace(/^www\./, "")
const companyNameOf = (domain: string) =>
  capitalize((domain.split(".")[0] ?? domain).replace(/[^a-z0-9]+/g, " ").trim())

const titles = ["Head of Growth", "VP Engineering", "Account Executive", "Product Manager", "Chief Operating Officer"]
const industries = ["Software", "Financial Services", "Healthcare", "Retail", "Manufacturing", "Logistics"]
const ranges = ["1-10", "11-50", "51-200", "201-500", "501-1000", "1001-5000"]
const countries = ["US", "GB", "DE", "FR", "IN", "CA", "NL"]
const cities = ["San Francisco, US", "London, GB", "Berlin, DE", "Toronto, CA", "Bengaluru, IN"]

const words = [
  "data",
  "agents",
  "verified",
  "results",
  "market",
  "report",
  "analysis",
  "platform",
  "customers",
  "pricing",
  "quarter",
  "growth",
  "research",
  "product",
  "launch",
  "team",
  "industry",
  "update",
  "strategy",
  "service"
]

/** A deterministic paragraph of about `length` characters. */
const paragraph = (tool: MockTool, input: ItemInput, length: number) => {
  const out: Array<string> = []
  let size = 0
  for (let i = 0; size < length; i++) {
    const word = words[seeded(tool, input, `w${i}`, words.length)]!
    out.push(i === 0 ? capitalize(word) : word)
    size += word.length + 1
  }
  return `${out.join(" ")}.`
}

const emailFind = (tool: MockTool, input: ItemInput, mode: Mode) => {
  const domain = domainOf(input["domain"])
  const local = [slugify(input["first_name"]), slugify(input["last_name"])].filter((part) => part.length > 0).join(".")
  const email = `${local.length > 0 ? local : "contact"}@${domain}`
  return {
    email,
    first_name: input["first_name"] ?? null,
    last_name: input["last_name"] ?? null,
    domain,
    smtp: mode === "fail" ? { accepted: false, code: 550 } : { accepted: true, code: 250 },
    catch_all: mode === "partial",
    confidence: 70 + seeded(tool, input, "confidence", 30),
    sources: 1 + seeded(tool, input, "sources", 9)
  }
}

const emailVerify = (_tool: MockTool, input: ItemInput, mode: Mode) => {
  const email = String(input["email"] ?? "")
  if (mode === "fail") return { email, verdict: "unknown", smtp_code: null, accept_all: false, mx_found: false }
  return {
    email,
    verdict: mode === "partial" ? "risky" : "deliverable",
    smtp_code: 250,
    accept_all: mode === "partial",
    mx_found: true
  }
}

const phoneFind = (tool: MockTool, input: ItemInput, mode: Mode) => {
  const linkedinUrl = String(input["linkedin_url"] ?? "")
  const number = `+1415555${seeded(tool, input, "phone", 10_000).toString().padStart(4, "0")}`
  return {
    linkedin_url: linkedinUrl,
    phones: mode === "fail"
      ? []
      : [{
        number,
        type: mode === "partial" ? "switchboard" : pick(tool, input, "line", ["mobile", "direct"]),
        country: "US"
      }]
  }
}

const personEnrich = (tool: MockTool, input: ItemInput, mode: Mode) => {
  const email = String(input["email"] ?? "").trim()
  const [local = "", domain = ""] = email.toLowerCase().split("@")
  const fullName = local.split(/[._-]+/).filter((part) => part.length > 0).map(capitalize).join(" ") || "Alex Morgan"
  const linkedinUrl = typeof input["linkedin_url"] === "string"
    ? input["linkedin_url"]
    : `https://www.linkedin.com/in/${local.replace(/[^a-z0-9]+/g, "-")}`
  return {
    identifiers: { emails: [mode === "fail" ? `someone.else@${domain}` : email], linkedin_url: linkedinUrl },
    full_name: fullName,
    title: mode === "partial" ? null : pick(tool, input, "title", titles),
    employer: mode === "partial" ? null : companyNameOf(domain),
    location: pick(tool, input, "city", cities)
  }
}

const companyEnrich = (tool: MockTool, input: ItemInput, mode: Mode) => {
  const domain = domainOf(input["domain"])
  return {
    domain: mode === "fail" ? `${domain.split(".")[0]}-holdings.com` : domain,
    name: companyNameOf(domain),
    industry: pick(tool, input, "industry", industries),
    employee_range: mode === "partial" ? null : pick(tool, input, "range", ranges),
    hq_country: mode === "partial" ? null : pick(tool, input, "country", countries),
    founded_year: 1990 + seeded(tool, input, "founded", 34)
  }
}

const webSearch = (tool: MockTool, input: ItemInput, mode: Mode) => {
  const query = String(input["query"] ?? "")
  const wanted = typeof input["count"] === "number" ? Math.max(3, Math.min(10, Math.floor(input["count"]))) : 5
  const count = mode === "fail" ? 2 : wanted
  const slug = slugify(query).slice(0, 24) || "query"
  return {
    query,
    results: Array.from({ length: count }, (_, i) => ({
      position: i + 1,
      title: `${capitalize(query.trim() || "Result")}: source ${i + 1}`,
      url: `https://${
        pick(tool, input, `site${i}`, ["news", "docs", "blog", "wiki", "forum"])
      }${i}.example.com/${slug}`,
      snippet: mode === "partial" ? "" : paragraph(tool, { ...input, i }, 80)
    }))
  }
}

const webExtract = (tool: MockTool, input: ItemInput, mode: Mode) => {
  const url = String(input["url"] ?? "")
  const article = tool.check_id === "web_extract.article_fields"
  return {
    url,
    final_url: url,
    status_code: 200,
    title: `${capitalize(pick(tool, input, "title", words))} ${pick(tool, input, "title2", words)}`,
    text: paragraph(tool, input, mode === "fail" ? 60 : 480),
    author: article && mode === "partial" ? null : pick(tool, input, "author", ["A. Writer", "J. Reporter", "Staff"]),
    published_at: article && mode === "partial" ? null : "2026-10-01T09:00:00.000Z",
    interstitial: !article && mode === "partial" ? "paywall" : null
  }
}

const generators: { readonly [T in TaskTypeId]: (tool: MockTool, input: ItemInput, mode: Mode) => unknown } = {
  email_find: emailFind,
  email_verify: emailVerify,
  phone_find: phoneFind,
  person_enrich: personEnrich,
  company_enrich: companyEnrich,
  web_search: webSearch,
  web_extract: webExtract
}

/** The mock tool's answer to one try (`attempt` counts from 1). */
export const mockAnswer = (tool: MockTool, input: ItemInput, attempt: number): MockAnswer => {
  const markers = markersOf(input)
  if (markers.includes("mock-provider-error")) {
    return { _tag: "ProviderFailure", reason: `${tool.provider} answered 503 Service Unavailable` }
  }
  if (markers.includes(`mock-down-${tool.provider.toLowerCase()}`)) {
    return { _tag: "ProviderFailure", reason: `${tool.provider} answered 503 Service Unavailable` }
  }
  if (markers.includes("mock-flaky") && attempt === 1) {
    return { _tag: "ProviderFailure", reason: `${tool.provider} answered 502 Bad Gateway` }
  }
  const mode: Mode = markers.includes("mock-fail") ? "fail" : markers.includes("mock-partial") ? "partial" : "pass"
  return { _tag: "Answer", result: generators[tool.task_type](tool, input, mode) }
}
