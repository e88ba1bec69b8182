/** Stripe's form encoding back into an object (`a[b]=c`, `expand[0]=x`). */
export const parseForm = (body: string): Record<string, any> => {
  const out: Record<string, any> = {}
  for (const [key, value] of new URLSearchParams(body)) {
    const parts = key.split(/\[|\]/).filter((p) => p !== "")
    let target = out
    for (let i = 0; i < parts.length - 1; i++) target = target[parts[i]!] ??= {}
    target[parts[parts.length - 1]!] = value
  }
  return out
}

/** A form field that may be sent as one value, `name[]=...` or `name[0]=...`, as a list. */
export const asList = (value: unknown): Array<string> =>
  value === undefined
    ? []
    : Array.isArray(value)
    ? value
    : typeof value === "object"
    ? Object.values(value as object)
    : [String(value)]
