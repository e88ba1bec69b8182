import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { CatalogueEndpoint, EndpointWithProvider, Provider, ProviderListing } from "../../Domain/Catalogue.js"

/**
 * SQL of the gateway catalogue, read and written through its models: rows decode to
 * `CatalogueEndpoint` and `Provider`, the data file's entries are written through their
 * insert variants. An endpoint is read with its provider (`EndpointWithProvider`) by the
 * catalogue's search, the gateway, the tool runner and tool administration alike.
 */
const CountsRow = Schema.Struct({
  providers: Schema.NumberFromString,
  endpoints: Schema.NumberFromString,
  live: Schema.NumberFromString,
  on_request: Schema.NumberFromString,
  categories: Schema.NumberFromString
})

const providerRows = Schema.encode(Schema.Array(Provider.insert))
const endpointRows = Schema.encode(Schema.Array(CatalogueEndpoint.insert))

// The provider's row as one jsonb value beside the endpoint's columns (decoded by `Provider`).
const endpointWithProvider = (sql: SqlClient.SqlClient) =>
  sql`SELECT e.*, to_jsonb(p) AS provider FROM catalogue_endpoints e JOIN providers p ON p.id = e.provider_id`

export class CatalogueRepo extends Effect.Service<CatalogueRepo>()("Catalogue/CatalogueRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Inserts new records and refreshes descriptive fields; prices and availability already in the database are kept. */
    const upsert = (
      providers: ReadonlyArray<typeof Provider.insert.Type>,
      endpoints: ReadonlyArray<typeof CatalogueEndpoint.insert.Type>
    ) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`
          INSERT INTO providers ${sql.insert(yield* providerRows(providers))}
          ON CONFLICT (id) DO UPDATE SET name = excluded.name, base_url = excluded.base_url, auth = excluded.auth,
            cost_report = excluded.cost_report, docs_url = excluded.docs_url`
        yield* sql`
          INSERT INTO catalogue_endpoints ${sql.insert(yield* endpointRows(endpoints))}
          ON CONFLICT (id) DO UPDATE SET provider_id = excluded.provider_id, name = excluded.name,
            category = excluded.category, method = excluded.method, path = excluded.path,
            path_params = excluded.path_params, people_lookup_field = excluded.people_lookup_field,
            base_url = excluded.base_url`
      })).pipe(Effect.orDie)

    /** Every endpoint with its provider, in id order (the catalogue kept in memory). */
    const all = SqlSchema.findAll({
      Request: Schema.Void,
      Result: EndpointWithProvider,
      execute: () => sql`${endpointWithProvider(sql)} ORDER BY e.id`
    })(undefined).pipe(Effect.orDie)

    const findEndpoint = SqlSchema.findOne({
      Request: Schema.String,
      Result: EndpointWithProvider,
      execute: (id) => sql`${endpointWithProvider(sql)} WHERE e.id = ${id}`
    })
    /** One endpoint with its provider: what a call to it is forwarded with. */
    const endpoint = (id: string) => findEndpoint(id).pipe(Effect.orDie)

    /** Every provider with its published daily call cap and endpoint counts. */
    const providers = SqlSchema.findAll({
      Request: Schema.Void,
      Result: ProviderListing,
      execute: () =>
        sql`
          SELECT p.id, p.name, p.docs_url, p.daily_call_cap, p.cost_report IS NOT NULL AS reports_cost,
                 count(e.id)::int AS endpoints, (count(e.id) FILTER (WHERE e.availability = 'live'))::int AS live_endpoints
          FROM providers p LEFT JOIN catalogue_endpoints e ON e.provider_id = p.id
          GROUP BY p.id ORDER BY p.id`
    })(undefined).pipe(Effect.orDie)

    const counts = SqlSchema.single({
      Request: Schema.Void,
      Result: CountsRow,
      execute: () =>
        sql`
          SELECT (SELECT count(*) FROM providers) AS providers,
                 count(*) AS endpoints,
                 count(*) FILTER (WHERE availability = 'live') AS live,
                 count(*) FILTER (WHERE availability = 'on request') AS on_request,
                 count(DISTINCT category) AS categories
          FROM catalogue_endpoints`
    })(undefined).pipe(Effect.orDie)

    return { upsert, all, endpoint, providers, counts } as const
  })
}) {}
