import { createHash } from "node:crypto"
import type { EndpointWithProvider } from "../../Domain/Catalogue.js"
import type { CallParams, ProviderAnswer } from "./ProviderTypes.js"

/**
 * The built-in sandbox provider: answers every live catalogue endpoint with plausible,
 * deterministic data shaped by the endpoint's category and the caller's parameters (the
 * same call always gets the same answer). It is what the embedded default uses, so the
 * gateway works with nothing configured; it never reaches the network.
 */
const FIRST = [
  "Ada",
  "Grace",
  "Alan",
  "Edsger",
  "Barbara",
  "Donald",
  "Frances",
  "Ken",
  "Radia",
  "Tim",
  "Margaret",
  "Linus"
]
const LAST = [
  "Lovelace",
  "Hopper",
  "Turing",
  "Dijkstra",
  "Liskov",
  "Knuth",
  "Allen",
  "Thompson",
  "Perlman",
  "Lee",
  "Hamilton",
  "Torvalds"
]
const TITLES = [
  "Head of Growth",
  "CTO",
  "Sales Director",
  "Software Engineer",
  "VP Marketing",
  "Founder",
  "Data Analyst"
]
const INDUSTRIES = ["Software", "Logistics", "Healthcare", "Fintech", "Retail", "Manufacturing", "Education"]
const CITIES = ["Berlin", "Austin", "Bangalore", "Toronto", "Lisbon", "Singapore", "Nairobi", "Melbourne"]
const WORDS = ["pricing", "guide", "overview", "report", "analysis", "news", "review", "update", "tutorial", "data"]

class Seeded {
  private state: bigint
  constructor(seed: string) {
    this.state = BigInt("0x" + createHash("sha256").update(seed).digest("hex").slice(0, 15))
  }
  next(): number {
    // 60-bit linear congruential steps: deterministic and good enough for sample data.
    this.state = (this.state * 6364136223846793005n + 1442695040888963407n) & ((1n << 60n) - 1n)
    return Number(this.state >> 28n) / 2 ** 32
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1))
  }
  pick<T>(items: ReadonlyArray<T>): T {
    return items[this.int(0, items.length - 1)]!
  }
}

const stringParam = (params: CallParams, ...names: Array<string>): string | undefined => {
  for (const source of [params.pathParams, params.query ?? {}, params.body ?? {}]) {
    for (const name of names) {
      const value = source[name]
      if (typeof value === "string" && value.length > 0) return value
      if (typeof value === "number") return String(value)
    }
  }
  return undefined
}

const domainFrom = (params: CallParams, rng: Seeded): string => {
  const raw = stringParam(params, "domain", "company_domain", "website", "url", "email")
  if (raw) {
    const host = raw.toLowerCase().replace(/^.*@/, "").replace(/^[a-z]+:\/\//, "").split(/[/?#]/)[0]!
    if (host.includes(".")) return host.replace(/^www\./, "")
  }
  return `${rng.pick(["acme", "globex", "initech", "umbrella", "hooli", "stark"])}${rng.int(1, 99)}.com`
}

const companyName = (domain: string) => {
  const stem = domain.split(".")[0] ?? domain
  return stem.charAt(0).toUpperCase() + stem.slice(1).replace(/[^a-z]/gi, "") + " Inc."
}

const person = (rng: Seeded, domain: string) => {
  const firstName = rng.pick(FIRST)
  const lastName = rng.pick(LAST)
  return {
    full_name: `${firstName} ${lastName}`,
    first_name: firstName,
    last_name: lastName,
    email: `${firstName.toLowerCase()}.${lastName.toLowerCase()}@${domain}`,
    title: rng.pick(TITLES),
    company: companyName(domain),
    domain,
    location: rng.pick(CITIES),
    linkedin_url: `https://www.linkedin.com/in/${firstName.toLowerCase()}-${lastName.toLowerCase()}-${
      rng.int(100, 999)
    }`
  }
}

const dataFor = (endpoint: EndpointWithProvider, params: CallParams, rng: Seeded): unknown => {
  const domain = domainFrom(params, rng)
  const query = stringParam(params, "q", "query", "search", "keyword", "prompt") ?? "sample query"
  switch (endpoint.category) {
    case "people":
      return { person: person(rng, domain), confidence: rng.int(70, 99) }
    case "companies":
      return {
        company: {
          name: companyName(domain),
          domain,
          industry: rng.pick(INDUSTRIES),
          employees: rng.int(5, 5000),
          founded: rng.int(1990, 2022),
          country: rng.pick(["US", "DE", "IN", "CA", "PT", "SG", "KE", "AU"]),
          city: rng.pick(CITIES)
        }
      }
    case "search":
      return {
        query,
        results: Array.from({ length: 5 }, (_, index) => {
          const word = rng.pick(WORDS)
          return {
            position: index + 1,
            title: `${query} ${word}`,
            url: `https://${rng.pick(["example", "docs", "news", "blog"])}.${rng.pick(["com", "org", "io"])}/${word}-${
              rng.int(1, 999)
            }`,
            snippet: `Sample result about ${query} (${word}).`
          }
        })
      }
    case "scrape": {
      const url = stringParam(params, "url") ?? `https://${domain}/`
      return {
        url,
        status_code: 200,
        title: `${companyName(domain)} | ${rng.pick(WORDS)}`,
        text: `Sample page text for ${url}.`,
        links: Array.from({ length: 3 }, () => `https://${domain}/${rng.pick(WORDS)}`)
      }
    }
    case "social": {
      const handle = stringParam(params, "handle", "username", "user", "profile") ?? `user${rng.int(100, 9999)}`
      return {
        profile: {
          handle,
          name: `${rng.pick(FIRST)} ${rng.pick(LAST)}`,
          followers: rng.int(10, 250_000),
          verified: rng.next() > 0.7
        },
        posts: Array.from(
          { length: 3 },
          (_, index) => ({
            id: `${rng.int(10_000, 99_999)}${index}`,
            text: `Sample post about ${rng.pick(WORDS)}`,
            likes: rng.int(0, 5000)
          })
        )
      }
    }
    case "finance": {
      const symbol = (stringParam(params, "symbol", "ticker") ?? rng.pick(["ACME", "GLBX", "INIT"])).toUpperCase()
      return {
        symbol,
        price: (rng.int(1_000, 500_000) / 100).toFixed(2),
        currency: "USD",
        change_pct: ((rng.int(0, 1000) - 500) / 100).toFixed(2)
      }
    }
    case "brands":
      return {
        domain,
        name: companyName(domain),
        logo_url: `https://${domain}/logo.png`,
        colors: [
          `#${rng.int(0, 0xffffff).toString(16).padStart(6, "0")}`,
          `#${rng.int(0, 0xffffff).toString(16).padStart(6, "0")}`
        ]
      }
    case "ai":
      return {
        output: `Sample answer to: ${query}`,
        usage: { input_tokens: rng.int(5, 500), output_tokens: rng.int(20, 800) }
      }
    default:
      return {
        ok: true,
        endpoint: endpoint.id,
        result: { id: `sbx_${rng.int(100_000, 999_999)}`, value: rng.pick(WORDS) }
      }
  }
}

/** The sandbox's answer body to one call: the same call always gets the same answer. */
export const sandboxSample = (endpoint: EndpointWithProvider, params: CallParams): unknown => {
  const seed = JSON.stringify([endpoint.id, params.pathParams, params.query ?? null, params.body ?? null])
  return { sandbox: true, endpoint: endpoint.id, data: dataFor(endpoint, params, new Seeded(seed)) }
}

/** The sandbox's answer to one call. */
export const sandboxAnswer = (endpoint: EndpointWithProvider, params: CallParams): ProviderAnswer => ({
  status: 200,
  headers: { "content-type": "application/json", "x-sandbox": "true" },
  body: JSON.stringify(sandboxSample(endpoint, params))
})
