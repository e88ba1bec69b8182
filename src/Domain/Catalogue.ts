import { Schema } from "effect"

/** The gateway catalogue: providers and the endpoints of theirs that agents may call. */
export const categories = [
  "people",
  "companies",
  "search",
  "scrape",
  "social",
  "finance",
  "brands",
  "ai",
  "utilities",
  "identity",
  "messaging",
  "compute"
] as const
export const Category = Schema.Literal(...categories).annotations({ identifier: "Category" })
export type Category = typeof Category.Type

export const availabilities = ["live", "on request"] as const
export const Availability = Schema.Literal(...availabilities).annotations({ identifier: "Availability" })
export type Availability = typeof Availability.Type

export const HttpMethod = Schema.Literal("GET", "POST", "PATCH", "DELETE")
export type HttpMethod = typeof HttpMethod.Type

/** How the provider's own credential is sent. */
export const ProviderAuth = Schema.Union(
  Schema.Struct({ in: Schema.Literal("header"), name: Schema.String, prefix: Schema.String }),
  Schema.Struct({ in: Schema.Literal("query"), name: Schema.String })
)
export type ProviderAuth = typeof ProviderAuth.Type

/** Where a provider reports what a call cost, when it does. */
export const CostReport = Schema.Union(
  Schema.Struct({ in: Schema.Literal("header"), name: Schema.String, unit: Schema.Literal("usd", "credits") }),
  Schema.Struct({ in: Schema.Literal("body"), path: Schema.String, unit: Schema.Literal("usd", "credits") })
)
export type CostReport = typeof CostReport.Type

/** A provider record as kept in the data file and the database. */
export const Provider = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  base_url: Schema.String,
  auth: ProviderAuth,
  cost_report: Schema.NullOr(CostReport),
  daily_call_cap: Schema.Int,
  docs_url: Schema.String
})
export type Provider = typeof Provider.Type

/** An endpoint record as kept in the data file (prices are base prices, before plan). */
export const CatalogueEntry = Schema.Struct({
  id: Schema.String,
  provider: Schema.String,
  name: Schema.String,
  category: Category,
  method: HttpMethod,
  path: Schema.String,
  path_params: Schema.Array(Schema.String),
  base_price_credits: Schema.Int,
  availability: Availability,
  people_lookup_field: Schema.optional(Schema.String),
  /** Set when this endpoint lives on another host than the provider's base URL. */
  base_url: Schema.optional(Schema.String)
})
export type CatalogueEntry = typeof CatalogueEntry.Type

/** The public catalogue endpoint record, priced for the caller's plan. */
export const CatalogueEndpoint = Schema.Struct({
  id: Schema.String,
  provider: Schema.String,
  provider_name: Schema.String,
  name: Schema.String,
  category: Category,
  method: HttpMethod,
  path: Schema.String,
  path_params: Schema.Array(Schema.String),
  price_per_call: Schema.String.annotations({ description: "Credits per call for the caller's plan" }),
  availability: Availability
}).annotations({ identifier: "CatalogueEndpoint" })
export type CatalogueEndpoint = typeof CatalogueEndpoint.Type

/** Placeholder names of a provider path, in order: `/repos/{owner}/{repo}` -> owner, repo. */
export const placeholdersOf = (path: string): ReadonlyArray<string> =>
  Array.from(path.matchAll(/\{([^}]+)\}/g), (match) => match[1]!)
