import type { TaskTypeId } from "../../Domain/TaskType.js"

/**
 * Whether an answer that passed its published check is also the right one, against the
 * sample's known answer: the field of the task type that a reviewer labelled.
 */
type Expected = Readonly<Record<string, string | number>>

const field = (value: unknown, name: string): unknown =>
  typeof value === "object" && value !== null ? (value as Record<string, unknown>)[name] : undefined

const sameText = (a: unknown, b: unknown) =>
  typeof a === "string" && typeof b === "string" && a.trim().toLowerCase() === b.trim().toLowerCase()

const graders: { readonly [T in TaskTypeId]: (result: unknown, expected: Expected) => boolean } = {
  email_find: (result, expected) => sameText(field(result, "email"), expected["email"]),
  email_verify: (result, expected) => sameText(field(result, "verdict"), expected["verdict"]),
  phone_find: (result, expected) => {
    const phones = field(result, "phones")
    return Array.isArray(phones) && phones.length > 0 && sameText(field(phones[0], "country"), expected["country"])
  },
  person_enrich: (result, expected) => sameText(field(result, "full_name"), expected["full_name"]),
  company_enrich: (result, expected) => sameText(field(result, "name"), expected["name"]),
  web_search: (result, expected) => {
    const results = field(result, "results")
    return Array.isArray(results) && results.length >= Number(expected["min_results"])
  },
  web_extract: (result, expected) => {
    const text = field(result, "text")
    return typeof text === "string" && text.length >= Number(expected["min_text_chars"])
  }
}

export const isRightAnswer = (taskType: TaskTypeId, result: unknown, expected: Expected): boolean =>
  graders[taskType](result, expected)

/** The q-th quantile (0..1) of the latencies, nearest rank; 0 for none. */
export const quantile = (values: ReadonlyArray<number>, q: number): number => {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!
}
