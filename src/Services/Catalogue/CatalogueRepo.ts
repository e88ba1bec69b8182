import { SqlClient } from "@effect/sql"
import { Effect, Schema, Struct } from "effect"
import { Availability, CatalogueEndpoint, type CatalogueEntry, type Provider } from "../../Domain/Catalogue.js"
import { statementRows } from "../StatementRows.js"

/** The columns every endpoint row shares with the public record. */
export const endpointFields = Struct.pick(
  CatalogueEndpoint.fields,
  "id",
  "name",
  "category",
  "method",
  "path",
  "path_params"
)

/** SQL for the gateway catalogue; rows decoded (prices as bigint credits). */
export const EndpointRow = Schema.Struct({
  ...endpointFields,
  provider_id: Schema.String,
  provider_name: Schema.String,
  base_price_credits: Schema.BigInt,
  availability: Availability,
  people_lookup_field: Schema.NullOr(Schema.String)
})
export type EndpointRow = typeof EndpointRow.Type

const CountsRow = Schema.Struct({
  providers: Schema.NumberFromString,
  endpoints: Schema.NumberFromString,
  live: Schema.NumberFromString,
  on_request: Schema.NumberFromString,
  categories: Schema.NumberFromString
})

export class CatalogueRepo extends Effect.Service<CatalogueRepo>()("Catalogue/CatalogueRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const endpointRows = statementRows(EndpointRow)
    const countsRows = statementRows(CountsRow)

    /** Inserts new records and refreshes descriptive fields; prices and availability already in the database are kept. */
    const upsert = (providers: ReadonlyArray<Provider>, endpoints: ReadonlyArray<CatalogueEntry>) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`
          INSERT INTO providers ${
          sql.insert(providers.map((p) => ({
            id: p.id,
            name: p.name,
            base_url: p.base_url,
            auth: JSON.stringify(p.auth),
            cost_report: p.cost_report === null ? null : JSON.stringify(p.cost_report),
            daily_call_cap: p.daily_call_cap,
            docs_url: p.docs_url
          })))
        }
          ON CONFLICT (id) DO UPDATE SET name = excluded.name, base_url = excluded.base_url, auth = excluded.auth,
            cost_report = excluded.cost_report, docs_url = excluded.docs_url`
        yield* sql`
          INSERT INTO catalogue_endpoints ${
          sql.insert(endpoints.map((e) => ({
            id: e.id,
            provider_id: e.provider,
            name: e.name,
            category: e.category,
            method: e.method,
            path: e.path,
            path_params: JSON.stringify(e.path_params),
            base_price_credits: e.base_price_credits,
            availability: e.availability,
            people_lookup_field: e.people_lookup_field ?? null,
            base_url: e.base_url ?? null
          })))
        }
          ON CONFLICT (id) DO UPDATE SET provider_id = excluded.provider_id, name = excluded.name,
            category = excluded.category, method = excluded.method, path = excluded.path,
            path_params = excluded.path_params, people_lookup_field = excluded.people_lookup_field,
            base_url = excluded.base_url`
      })).pipe(Effect.orDie)

    /** Every endpoint with its provider's name, in id order (the catalogue kept in memory). */
    const all = endpointRows.all(sql`
          SELECT e.id, e.provider_id, p.name AS provider_name, e.name, e.category, e.method, e.path, e.path_params,
                 e.base_price_credits, e.availability, e.people_lookup_field
          FROM catalogue_endpoints e JOIN providers p ON p.id = e.provider_id
          ORDER BY e.id`).pipe(Effect.orDie)

    const counts = countsRows.single(sql`
          SELECT (SELECT count(*) FROM providers) AS providers,
                 count(*) AS endpoints,
                 count(*) FILTER (WHERE availability = 'live') AS live,
                 count(*) FILTER (WHERE availability = 'on request') AS on_request,
                 count(DISTINCT category) AS categories
          FROM catalogue_endpoints`).pipe(Effect.orDie)

    return { upsert, all, counts }
  })
}) {}
