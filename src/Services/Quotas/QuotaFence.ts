import type { Statement } from "@effect/sql"
import type { Brand } from "effect"

/**
 * The fence around `Quotas.consume`'s one statement: a caller may write one row of its own
 * that exists only when every count passed (the gateway's pending call row). The quota
 * statement hands the caller `QuotaPassed`, a relation with one row when the counts passed
 * and none otherwise, to select from (`INSERT ... SELECT ... FROM ${passed}`); the caller
 * answers an `AfterQuota` statement built with `afterQuota`. The statement's own names
 * (the CTEs `q`, `l`, `passed`, `recorded`) stay the quotas'.
 */
export type QuotaPassed = Statement.Fragment & Brand.Brand<"Quotas/QuotaPassed">

export type AfterQuota = Statement.Fragment & Brand.Brand<"Quotas/AfterQuota">

/** Marks a repository's statement as its write after the counts passed (see above). */
export const afterQuota = (statement: Statement.Fragment): AfterQuota => statement as AfterQuota
