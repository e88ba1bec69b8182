/**
 * The published checks, one function per check id and version (the text each implements is
 * the tool's `check.verifies`, served by `GET /v1/tools`). A check reads the item's input
 * and the result in the task type's canonical shape (see `ResultShapes`), and says whether
 * the result passed, passed partially (both are charged) or failed (not charged), with the
 * reason when it is not a clean pass. Receipts record the check's id and version per item.
 */
export type CheckOutcome = "passed" | "partial" | "failed"

export interface CheckVerdict {
  readonly outcome: CheckOutcome
  readonly reason: string | null
}

export type ItemInput = Readonly<Record<string, unknown>>
type Json = Readonly<Record<string, unknown>>

const passed: CheckVerdict = { outcome: "passed", reason: null }
const partial = (reason: string): CheckVerdict => ({ outcome: "partial", reason })
const failed = (reason: string): CheckVerdict => ({ outcome: "failed", reason })

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)
const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)
const nonEmpty = (value: unknown): value is string => typeof value === "string" && value.trim().length > 0

const EMAIL_SYNTAX =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/
const E164 = /^\+[1-9]\d{6,14}$/

/** `Acme.com`, `https://www.acme.com/about`, `acme.com.` -> `acme.com`. */
export const normalizeDomain = (value: string): string =>
  value.trim().toLowerCase().replace(/^[a-z]+:\/\//, "").replace(/[/?#].*$/, "").replace(/:\d+$/, "")
    .replace(/^www\./, "").replace(/\.$/, "")

/** A LinkedIn profile URL compared without scheme, `www.`, query or trailing slash. */
export const normalizeProfileUrl = (value: string): string =>
  value.trim().toLowerCase().replace(/^[a-z]+:\/\//, "").replace(/^www\./, "").replace(/[?#].*$/, "").replace(
    /\/+$/,
    ""
  )

const hostOf = (url: string): string | undefined => {
  try {
    const parsed = new URL(url)
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? normalizeDomain(parsed.hostname) : undefined
  } catch {
    return undefined
  }
}

const notAnObject = failed("The provider's answer is not an object")

const emailFind_1_2_0 = (input: ItemInput, result: unknown): CheckVerdict => {
  if (!isObject(result)) return notAnObject
  const email = str(result["email"])
  if (email === undefined || email.length === 0) return failed("No email address was returned")
  if (!EMAIL_SYNTAX.test(email)) return failed(`The address ${JSON.stringify(email)} is not syntactically valid`)
  const requested = normalizeDomain(String(input["domain"] ?? ""))
  const domain = normalizeDomain(email.slice(email.lastIndexOf("@") + 1))
  if (domain !== requested) return failed(`The address is on ${domain}, not on the requested domain ${requested}`)
  const smtp = isObject(result["smtp"]) ? result["smtp"] : undefined
  if (smtp === undefined || smtp["accepted"] !== true) return failed("The SMTP probe did not accept the address")
  if (result["catch_all"] === true) return partial(`${domain} is a catch-all domain: the probe accepts any address`)
  return passed
}

const verdicts = new Set(["deliverable", "undeliverable", "risky"])
const emailVerify_2_0_1 = (input: ItemInput, result: unknown): CheckVerdict => {
  if (!isObject(result)) return notAnObject
  const verdict = str(result["verdict"])
  if (verdict === undefined || !verdicts.has(verdict)) {
    return failed(`The verdict ${JSON.stringify(result["verdict"] ?? null)} is not deliverable, undeliverable or risky`)
  }
  const code = result["smtp_code"]
  if (typeof code !== "number" || !Number.isInteger(code) || code < 200 || code > 599) {
    return failed("The answer carries no SMTP status code of the probe")
  }
  const requested = String(input["email"] ?? "").trim().toLowerCase()
  if (str(result["email"])?.trim().toLowerCase() !== requested) {
    return failed("The verdict is not for exactly the requested address")
  }
  if (result["accept_all"] === true) return partial("The domain accepts all addresses (catch-all)")
  return passed
}

const phoneFind_1_1_0 = (input: ItemInput, result: unknown): CheckVerdict => {
  if (!isObject(result)) return notAnObject
  const requested = normalizeProfileUrl(String(input["linkedin_url"] ?? ""))
  const profile = str(result["linkedin_url"])
  if (profile === undefined || normalizeProfileUrl(profile) !== requested) {
    return failed("The numbers are not for the profile at the requested LinkedIn URL")
  }
  const phones = Array.isArray(result["phones"]) ? result["phones"] : []
  const valid = phones.filter((phone): phone is Json => isObject(phone) && E164.test(String(phone["number"] ?? "")))
  if (valid.length === 0) return failed("No E.164-normalised phone number was returned")
  if (valid.some((phone) => phone["type"] === "mobile" || phone["type"] === "direct")) return passed
  return partial("Only company switchboard numbers or numbers without a line type were returned")
}

const personEnrich_1_3_0 = (input: ItemInput, result: unknown): CheckVerdict => {
  if (!isObject(result)) return notAnObject
  const identifiers = isObject(result["identifiers"]) ? result["identifiers"] : {}
  const emails = Array.isArray(identifiers["emails"])
    ? identifiers["emails"].map((email) => String(email).trim().toLowerCase())
    : []
  if (!emails.includes(String(input["email"] ?? "").trim().toLowerCase())) {
    return failed("The profile does not list the requested email among its identifiers")
  }
  if (nonEmpty(input["linkedin_url"])) {
    const profile = str(identifiers["linkedin_url"])
    if (profile === undefined || normalizeProfileUrl(profile) !== normalizeProfileUrl(input["linkedin_url"])) {
      return failed("The profile does not list the requested LinkedIn URL")
    }
  }
  if (!nonEmpty(result["full_name"])) return failed("The profile carries no full name")
  if (!nonEmpty(result["title"]) || !nonEmpty(result["employer"])) {
    return partial("The profile misses the current job title or current employer")
  }
  return passed
}

const companyEnrich_1_0_2 = (input: ItemInput, result: unknown): CheckVerdict => {
  if (!isObject(result)) return notAnObject
  const requested = normalizeDomain(String(input["domain"] ?? ""))
  const domain = str(result["domain"])
  if (domain === undefined || normalizeDomain(domain) !== requested) {
    return failed(`The record's primary domain is not the requested domain ${requested}`)
  }
  if (!nonEmpty(result["name"])) return failed("The record carries no company name")
  const present = ["industry", "employee_range", "hq_country"].filter((field) => nonEmpty(result[field])).length
  if (present < 2) return partial("The record has fewer than two of industry, employee range and headquarters country")
  return passed
}

const webSearch_1_1_0 = (_input: ItemInput, result: unknown): CheckVerdict => {
  if (!isObject(result)) return notAnObject
  const results = Array.isArray(result["results"]) ? result["results"] : []
  if (results.length < 3) return failed(`${results.length} organic results were returned; at least 3 are needed`)
  const seen = new Set<string>()
  let withoutSnippet = 0
  for (const [index, entry] of results.entries()) {
    if (!isObject(entry)) return failed(`Result ${index} is not an object`)
    const url = str(entry["url"])
    if (url === undefined || hostOf(url) === undefined) return failed(`Result ${index} has no absolute http(s) url`)
    if (!nonEmpty(entry["title"])) return failed(`Result ${index} has an empty title`)
    if (seen.has(url)) return failed(`The url ${url} appears twice`)
    seen.add(url)
    if (!nonEmpty(entry["snippet"])) withoutSnippet++
  }
  if (withoutSnippet * 2 > results.length) return partial("More than half of the results lack a snippet")
  return passed
}

const extractedPage = (input: ItemInput, result: Json, textLabel: string): CheckVerdict | undefined => {
  const text = str(result["text"]) ?? ""
  if (text.trim().length < 200) return failed(`The ${textLabel} is shorter than 200 characters`)
  const requested = hostOf(String(input["url"] ?? ""))
  const final = hostOf(String(result["final_url"] ?? ""))
  if (final === undefined || requested === undefined || final !== requested) {
    return failed(`The final URL after redirects is not on the requested host ${requested ?? "(invalid url)"}`)
  }
  return undefined
}

const webExtractMainText_2_1_0 = (input: ItemInput, result: unknown): CheckVerdict => {
  if (!isObject(result)) return notAnObject
  const page = extractedPage(input, result, "main text")
  if (page !== undefined) return page
  const wall = result["interstitial"]
  if (wall === "paywall" || wall === "login" || wall === "consent") {
    return partial(
      `A ${wall === "login" ? "login wall" : wall === "consent" ? "consent interstitial" : "paywall"} was detected`
    )
  }
  return passed
}

const webExtractArticle_1_0_0 = (input: ItemInput, result: unknown): CheckVerdict => {
  if (!isObject(result)) return notAnObject
  if (!nonEmpty(result["title"])) return failed("The article has no title")
  const page = extractedPage(input, result, "main text")
  if (page !== undefined) return page
  if (!nonEmpty(result["author"]) && !nonEmpty(result["published_at"])) {
    return partial("The article misses both author and publication date")
  }
  return passed
}

export type CheckFunction = (input: ItemInput, result: unknown) => CheckVerdict

/** Every implemented check, by `<id>@<version>`. */
export const checks: Readonly<Record<string, CheckFunction>> = {
  "email_find.deliverable_address@1.2.0": emailFind_1_2_0,
  "email_verify.smtp_verdict@2.0.1": emailVerify_2_0_1,
  "phone_find.matched_mobile@1.1.0": phoneFind_1_1_0,
  "person_enrich.identity_match@1.3.0": personEnrich_1_3_0,
  "company_enrich.domain_match@1.0.2": companyEnrich_1_0_2,
  "web_search.organic_results@1.1.0": webSearch_1_1_0,
  "web_extract.main_text@2.1.0": webExtractMainText_2_1_0,
  "web_extract.article_fields@1.0.0": webExtractArticle_1_0_0
}

export const checkFor = (id: string, version: string): CheckFunction | undefined => checks[`${id}@${version}`]

/** Runs a check; a check that throws on a malformed answer counts as a failed check. */
export const runCheck = (id: string, version: string, input: ItemInput, result: unknown): CheckVerdict => {
  const check = checkFor(id, version)
  if (check === undefined) throw new Error(`No implementation of the published check ${id}@${version}`)
  try {
    return check(input, result)
  } catch (error) {
    return failed(`The answer could not be checked: ${error instanceof Error ? error.message : String(error)}`)
  }
}
