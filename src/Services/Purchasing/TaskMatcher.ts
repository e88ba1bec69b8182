import { type TaskTypeId, taskTypeIds } from "../../Domain/TaskType.js"

/**
 * Free text -> task type, by a published keyword table (no model, no randomness):
 *
 * 1. The text is lower-cased and cut into words of letters and digits (`[a-z0-9]+`).
 * 2. Each task type scores the sum of the weights of the distinct words of its table
 *    found in the text. `email_find` also scores +3 when an email word (`email`,
 *    `emails`, `mail`, `address`) and a finding word (`find`, `get`, `lookup`, ...) both
 *    appear: finding an address is the usual meaning of that pair.
 * 3. The highest score wins; ties go to the earlier type in the published order
 *    (email_find, email_verify, phone_find, person_enrich, company_enrich, web_search,
 *    web_extract). A text where every score is 0 maps to nothing (400 `unknown_task_type`).
 *
 * The answer names the words that led to the winner, so a caller can see why.
 */
export const keywordTable: { readonly [T in TaskTypeId]: Readonly<Record<string, number>> } = {
  email_find: { finder: 3, guess: 2, email: 1, emails: 1, mail: 1 },
  email_verify: {
    verify: 3,
    verifier: 3,
    verification: 3,
    validate: 3,
    validation: 3,
    validator: 3,
    deliverable: 3,
    deliverability: 3,
    undeliverable: 3,
    bounce: 3,
    bounces: 3,
    bouncing: 3,
    valid: 2,
    smtp: 2,
    mailbox: 2,
    email: 1,
    emails: 1,
    check: 1
  },
  phone_find: {
    phone: 3,
    phones: 3,
    mobile: 3,
    cell: 3,
    cellphone: 3,
    telephone: 3,
    dial: 2,
    number: 1,
    numbers: 1,
    call: 1
  },
  person_enrich: {
    person: 3,
    people: 2,
    profile: 2,
    individual: 2,
    prospect: 2,
    lead: 1,
    title: 1,
    job: 1,
    employer: 2,
    who: 1,
    contact: 1,
    enrich: 1,
    enrichment: 1,
    linkedin: 1,
    name: 1
  },
  company_enrich: {
    company: 3,
    companies: 3,
    organization: 3,
    organisation: 3,
    firm: 2,
    business: 2,
    firmographic: 3,
    firmographics: 3,
    industry: 2,
    headcount: 2,
    employees: 1,
    enrich: 1,
    enrichment: 1,
    domain: 1
  },
  web_search: { search: 3, google: 3, serp: 3, bing: 3, results: 2, query: 2, queries: 2, web: 1, websites: 1 },
  web_extract: {
    extract: 3,
    extraction: 3,
    scrape: 3,
    scraping: 3,
    scraper: 3,
    crawl: 3,
    crawling: 3,
    article: 2,
    html: 2,
    markdown: 2,
    content: 1,
    text: 1,
    page: 1,
    read: 1,
    url: 1
  }
}

const emailWords = new Set(["email", "emails", "mail", "address"])
const findingWords = new Set(["find", "get", "lookup", "look", "discover", "locate", "search", "guess"])
export const EMAIL_FIND_PAIR_BONUS = 3

export interface TaskMatch {
  readonly task_type: TaskTypeId
  /** The words of the text that scored for the chosen task type, in order of appearance. */
  readonly matched_words: ReadonlyArray<string>
  readonly score: number
}

export const wordsOf = (text: string): ReadonlyArray<string> => text.toLowerCase().match(/[a-z0-9]+/g) ?? []

export const matchTaskType = (text: string): TaskMatch | undefined => {
  const words = wordsOf(text)
  const distinct = Array.from(new Set(words))
  let best: TaskMatch | undefined
  for (const type of taskTypeIds) {
    const table = keywordTable[type]
    const matched = distinct.filter((word) => table[word] !== undefined)
    let score = matched.reduce((sum, word) => sum + table[word]!, 0)
    if (type === "email_find") {
      const email = distinct.find((word) => emailWords.has(word))
      const finding = distinct.find((word) => findingWords.has(word))
      if (email !== undefined && finding !== undefined) {
        score += EMAIL_FIND_PAIR_BONUS
        for (const word of [email, finding]) if (!matched.includes(word)) matched.push(word)
      }
    }
    if (score > 0 && (best === undefined || score > best.score)) {
      const order = (word: string) => distinct.indexOf(word)
      best = { task_type: type, score, matched_words: [...matched].sort((a, b) => order(a) - order(b)) }
    }
  }
  return best
}
