import { Schema } from "effect"
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { taskTypes } from "../../src/Domain/TaskType.js"
import { ToolEntry } from "../../src/Domain/Tool.js"
import { canonicalJson, sha256OfCanonical } from "../../src/Services/Purchasing/Canonical.js"
import { checkFor, runCheck } from "../../src/Services/Purchasing/Checks.js"
import { mockAnswer } from "../../src/Services/Purchasing/MockTools.js"
import { matchTaskType } from "../../src/Services/Purchasing/TaskMatcher.js"
import { canonicalResult } from "../../src/Services/Purchasing/ToolRunner.js"

const tools = Schema.decodeUnknownSync(Schema.Array(ToolEntry))(JSON.parse(readFileSync("data/tools.json", "utf8")))

/** A valid input for a tool, with `marker` in its first required field's value. */
const inputFor = (required: ReadonlyArray<string>, marker = "") => {
  const values: Record<string, string> = {
    first_name: "Jane",
    last_name: "Doe",
    domain: `${marker}acme.example.com`,
    email: `jane.doe@${marker}acme.example.com`,
    linkedin_url: `https://www.linkedin.com/in/jane-doe${marker}`,
    query: `best ${marker} crm for startups`,
    url: `https://news.example.com/${marker}story`
  }
  return Object.fromEntries(required.map((field) => [field, values[field]!]))
}

describe("published checks and mock tools", () => {
  it("implements the published check (id and version) of every tool", () => {
    for (const tool of tools) expect(checkFor(tool.check.id, tool.check.version), tool.slug).toBeDefined()
  })

  it("makes every tool's mock pass, pass partially and fail its own check on request", () => {
    for (const tool of tools) {
      const mock = { slug: tool.slug, provider: tool.provider, task_type: tool.task_type, check_id: tool.check.id }
      const verdict = (marker: string) => {
        const input = inputFor(tool.input.required, marker)
        const answer = mockAnswer(mock, input, 1)
        if (answer._tag !== "Answer") throw new Error(`${tool.slug} failed at the provider`)
        return runCheck(tool.check.id, tool.check.version, input, answer.result)
      }
      expect(verdict("").outcome, tool.slug).toBe("passed")
      expect(verdict("mock-partial-").outcome, tool.slug).toBe("partial")
      expect(verdict("mock-partial-").reason, tool.slug).toBeTruthy()
      const failed = verdict("mock-fail-")
      expect(failed.outcome, tool.slug).toBe("failed")
      expect(failed.reason, tool.slug).toBeTruthy()
    }
  })

  it("answers the same result for the same tool and input, and different results per tool", () => {
    const [a, b] = tools.filter((t) => t.task_type === "phone_find")
    const input = inputFor(a!.input.required)
    const run = (tool: typeof a) =>
      mockAnswer(
        { slug: tool!.slug, provider: tool!.provider, task_type: tool!.task_type, check_id: tool!.check.id },
        input,
        1
      )
    expect(run(a)).toEqual(run(a))
    expect(run(a)).not.toEqual(run(b))
  })

  it("fails providers on request: always, for one provider only, or only on the first try", () => {
    const mock = { slug: "hunter-email-finder", provider: "hunter", task_type: "email_find" as const, check_id: "x" }
    expect(mockAnswer(mock, { domain: "mock-provider-error.example" }, 2)._tag).toBe("ProviderFailure")
    expect(mockAnswer(mock, { domain: "mock-down-hunter.example" }, 2)._tag).toBe("ProviderFailure")
    expect(mockAnswer({ ...mock, provider: "apollo" }, { domain: "mock-down-hunter.example" }, 1)._tag).toBe("Answer")
    expect(mockAnswer(mock, { domain: "mock-flaky.example" }, 1)._tag).toBe("ProviderFailure")
    expect(mockAnswer(mock, { domain: "mock-flaky.example" }, 2)._tag).toBe("Answer")
  })

  it("rejects results that do not verify what the check publishes", () => {
    const input = { first_name: "Jane", last_name: "Doe", domain: "acme.com" }
    const check = (result: unknown) => runCheck("email_find.deliverable_address", "1.2.0", input, result)
    expect(check({ email: "jane@other.com", smtp: { accepted: true } }).outcome).toBe("failed")
    expect(check({ email: "not an address", smtp: { accepted: true } }).outcome).toBe("failed")
    expect(check({ email: "jane@ACME.com", smtp: { accepted: true } }).outcome).toBe("passed")
    expect(check({ email: "jane@acme.com", smtp: { accepted: true }, catch_all: true }).outcome).toBe("partial")
    expect(check("text").outcome).toBe("failed")
    const search = (results: Array<unknown>) =>
      runCheck("web_search.organic_results", "1.1.0", { query: "q" }, { results })
    const r = (i: number, snippet = "s") => ({ title: `t${i}`, url: `https://e${i}.com/`, snippet })
    expect(search([r(1), r(2), r(3)]).outcome).toBe("passed")
    expect(search([r(1), r(1), r(3)]).outcome).toBe("failed")
    expect(search([r(1), { title: "x", url: "/relative" }, r(3)]).outcome).toBe("failed")
    expect(search([r(1, ""), r(2, ""), r(3)]).outcome).toBe("partial")
    expect(() => runCheck("no.such_check", "1.0.0", {}, {})).toThrow()
  })

  it("reads the canonical result at the top level or under data/result", () => {
    const result = { email: "a@b.com", smtp: { accepted: true } }
    expect(canonicalResult("email_find", result)).toEqual(result)
    expect(canonicalResult("email_find", { data: result })).toEqual(result)
    expect(canonicalResult("email_find", { result })).toEqual(result)
  })
})

describe("canonical JSON", () => {
  it("sorts keys recursively, keeps array order and hashes equal values equally", () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: null } })).toBe(`{"a":{"c":null,"d":[2,1]},"b":1}`)
    expect(sha256OfCanonical({ x: 1, y: "z" })).toBe(sha256OfCanonical({ y: "z", x: 1 }))
    expect(sha256OfCanonical({ x: [1, 2] })).not.toBe(sha256OfCanonical({ x: [2, 1] }))
  })
})

describe("free text to task type", () => {
  const cases: Array<[string, string, Array<string>]> = [
    ["find the work email of Jane Doe at acme.com", "email_find", ["find", "email"]],
    ["verify these email addresses before we send", "email_verify", ["verify", "email"]],
    ["check whether an address bounces", "email_verify", ["check", "bounces"]],
    ["get a mobile phone number for this LinkedIn profile", "phone_find", ["mobile", "phone", "number"]],
    ["enrich this person: job title and employer", "person_enrich", ["enrich", "person", "job", "title", "employer"]],
    ["company size and industry for stripe.com", "company_enrich", ["company", "industry"]],
    ["search the web for the best CRM", "web_search", ["search", "web"]],
    ["scrape the article text from this url", "web_extract", ["scrape", "article", "text", "url"]]
  ]
  it.each(cases)("%s -> %s", (text, expected, words) => {
    const match = matchTaskType(text)
    expect(match?.task_type).toBe(expected)
    expect(match?.matched_words).toEqual(words)
  })

  it("maps text without any known word to nothing, and is deterministic", () => {
    expect(matchTaskType("hello there")).toBeUndefined()
    expect(matchTaskType("")).toBeUndefined()
    expect(matchTaskType("email")).toEqual(matchTaskType("email"))
    // A tie goes to the earlier task type in the published order.
    expect(matchTaskType("email")?.task_type).toBe("email_find")
  })

  it("covers each of the seven task types", () => {
    expect(new Set(cases.map(([, type]) => type)).size).toBe(taskTypes.length)
  })
})
