import { Model } from "@effect/sql"
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

/** A jsonb column kept off the wire: read as the value, written as its JSON text, the value in a data file. */
const JsonColumn = <A, I>(schema: Schema.Schema<A, I>) =>
  Model.Field({
    select: schema,
    insert: Schema.parseJson(schema),
    update: Schema.parseJson(schema),
    jsonCreate: schema,
    jsonUpdate: schema
  })

/** A jsonb column shown on the wire as it is. */
const WireJsonColumn = <A, I>(schema: Schema.Schema<A, I>) =>
  Model.Field({ ...JsonColumn(schema).schemas, json: schema })

/**
 * A provider of the gateway, declared once: `Provider` decodes its row, `Provider.jsonCreate`
 * its entry in the data file (`data/catalogue/providers.json`), `Provider.insert` the row
 * written from it (the credential's place and the cost report as jsonb), `Provider.json` its
 * fields on the wire (where it sends calls and with which credential stay off it).
 */
export class Provider extends Model.Class<Provider>("Provider")({
  id: Schema.String,
  name: Schema.String,
  docs_url: Schema.String,
  daily_call_cap: Schema.Int.annotations({ description: "Calls per org per day (UTC); over it: 429 provider_quota" }),
  base_url: Model.FieldExcept("json")(Schema.String),
  auth: JsonColumn(ProviderAuth),
  cost_report: JsonColumn(Schema.NullOr(CostReport))
}) {}

/** A text column that may be null, left out of a data file's entry when it is. */
const NullOrAbsentInFile = Model.Field({
  select: Schema.NullOr(Schema.String),
  insert: Schema.NullOr(Schema.String),
  update: Schema.NullOr(Schema.String),
  jsonCreate: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  jsonUpdate: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null })
})

/**
 * A catalogue endpoint, declared once: `CatalogueEndpoint` decodes its row,
 * `CatalogueEndpoint.jsonCreate` its entry in the data file (`data/catalogue/endpoints.json`:
 * the provider as `provider`, the base price as a number, the people-lookup field and the
 * endpoint's own host left out when there are none), `CatalogueEndpoint.insert` the row
 * written from it, `CatalogueEndpoint.json` the fields the wire shows as they are (the wire's
 * record adds the provider and the price for the caller's plan: `CatalogueEndpointJson`).
 */
export class CatalogueEndpoint extends Model.Class<CatalogueEndpoint>("CatalogueEndpointRow")({
  id: Schema.String,
  provider_id: Model.Field({
    select: Schema.String,
    insert: Schema.String,
    update: Schema.String,
    jsonCreate: Schema.propertySignature(Schema.String).pipe(Schema.fromKey("provider")),
    jsonUpdate: Schema.propertySignature(Schema.String).pipe(Schema.fromKey("provider"))
  }),
  name: Schema.String,
  category: Category,
  method: HttpMethod,
  path: Schema.String,
  path_params: WireJsonColumn(Schema.Array(Schema.String)),
  /** Credits per call before the plan's price (Plans.gatewayPrice). */
  base_price_credits: Model.Field({
    select: Schema.BigInt,
    insert: Schema.BigInt,
    update: Schema.BigInt,
    jsonCreate: Schema.BigIntFromNumber,
    jsonUpdate: Schema.BigIntFromNumber
  }),
  availability: Availability,
  /** The parameter that names a person's company, counted by the people-lookup limit (Quotas). */
  people_lookup_field: NullOrAbsentInFile,
  /** Set when this endpoint lives on another host than its provider's base URL. */
  base_url: NullOrAbsentInFile
}) {}

/** An endpoint with its provider: everything needed to forward a call (CatalogueRepo.endpoint). */
export const EndpointWithProvider = Schema.Struct({ ...CatalogueEndpoint.fields, provider: Provider })
export type EndpointWithProvider = typeof EndpointWithProvider.Type

/** The public catalogue endpoint record: the model's wire fields, its provider, and the price for the caller's plan. */
export const CatalogueEndpointJson = Schema.Struct({
  id: CatalogueEndpoint.json.fields.id,
  provider: CatalogueEndpoint.fields.provider_id,
  provider_name: Provider.json.fields.name,
  name: CatalogueEndpoint.json.fields.name,
  category: CatalogueEndpoint.json.fields.category,
  method: CatalogueEndpoint.json.fields.method,
  path: CatalogueEndpoint.json.fields.path,
  path_params: CatalogueEndpoint.json.fields.path_params,
  price_per_call: Schema.String.annotations({ description: "Credits per call for the caller's plan" }),
  availability: CatalogueEndpoint.json.fields.availability
}).annotations({ identifier: "CatalogueEndpoint" })
export type CatalogueEndpointJson = typeof CatalogueEndpointJson.Type

/** A provider as `GET /v1/providers` lists it: its wire fields and what its endpoints and cost report say. */
export const ProviderListing = Schema.Struct({
  ...Provider.json.fields,
  reports_cost: Schema.Boolean.annotations({
    description: "The provider reports each call's cost; a lower cost is what is charged"
  }),
  endpoints: Schema.Int,
  live_endpoints: Schema.Int
}).annotations({ identifier: "GatewayProvider" })
export type ProviderListing = typeof ProviderListing.Type

/** Placeholder names of a provider path, in order: `/repos/{owner}/{repo}` -> owner, repo. */
export const placeholdersOf = (path: string): ReadonlyArray<string> =>
  Array.from(path.matchAll(/\{([^}]+)\}/g), (match) => match[1]!)
