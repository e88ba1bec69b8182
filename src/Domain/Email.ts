import { Schema } from "effect"

/** An email address as people type it: surrounding spaces dropped, checked for shape. */
export const EmailAddress = Schema.Trim.pipe(
  Schema.maxLength(254, { message: () => "Email address is longer than 254 characters" }),
  Schema.pattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: () => "Expected a valid email address" })
).annotations({ identifier: "EmailAddress", description: "An email address" })

/** The form used to match addresses: trimmed and lower case. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase()
