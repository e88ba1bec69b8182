import { Config, Duration, Effect, Schema } from "effect"
import {
  type Availability,
  CatalogueEndpoint,
  type CatalogueEndpointJson,
  type Category,
  type EndpointWithProvider,
  Provider
} from "../../Domain/Catalogue.js"
import { gatewayPrice, type PlanId } from "../../Domain/Plans.js"
import { readDataFile } from "../DataFiles.js"
import { CatalogueRepo } from "./CatalogueRepo.js"

export interface EndpointQuery {
  readonly q?: string | undefined
  readonly category?: Category | undefined
  readonly provider?: string | undefined
  readonly availability?: Availability | undefined
}

/** A row with the lower-case text `q` is matched against: id, provider, provider name, name. */
interface IndexedEndpoint {
  readonly row: EndpointWithProvider
  readonly text: string
}

const indexed = (rows: ReadonlyArray<EndpointWithProvider>): ReadonlyArray<IndexedEndpoint> =>
  rows.map((row) => ({ row, text: [row.id, row.provider_id, row.provider.name, row.name].join(" ").toLowerCase() }))

/**
 * The gateway catalogue: loaded from ./data at start, searched and priced per plan.
 *
 * Searches read a copy kept in memory (947 endpoints), read again from the database at most
 * every CATALOGUE_CACHE_MS (default 60 s; 0 reads on every search), so a search costs no
 * round trip. The database stays the record: a price or availability changed there shows
 * within that time, and `load` refreshes the copy at once.
 */
export class Catalogue extends Effect.Service<Catalogue>()("Catalogue/Catalogue", {
  dependencies: [CatalogueRepo.Default],
  effect: Effect.gen(function*() {
    const repo = yield* CatalogueRepo
    const cacheMs = yield* Config.integer("CATALOGUE_CACHE_MS").pipe(Config.withDefault(60_000))
    const readAll = Effect.map(repo.all, indexed)
    const [current, invalidate] = cacheMs > 0
      ? yield* Effect.cachedInvalidateWithTTL(readAll, Duration.millis(cacheMs))
      : [readAll, Effect.void] as const

    const load = Effect.gen(function*() {
      const providers = yield* readDataFile("catalogue/providers.json", Schema.Array(Provider.jsonCreate))
      const endpoints = yield* readDataFile("catalogue/endpoints.json", Schema.Array(CatalogueEndpoint.jsonCreate))
      yield* repo.upsert(providers, endpoints)
      yield* invalidate
      return { providers: providers.length, endpoints: endpoints.length }
    })

    // The wire's record, built from the model's fields with the price for the plan.
    const toPublic = (plan: PlanId) => (row: EndpointWithProvider): CatalogueEndpointJson => ({
      id: row.id,
      provider: row.provider_id,
      provider_name: row.provider.name,
      name: row.name,
      category: row.category,
      method: row.method,
      path: row.path,
      path_params: row.path_params,
      price_per_call: gatewayPrice(row.base_price_credits, plan).toString(),
      availability: row.availability
    })

    /** Every word of `q` must appear in the id, provider or name (case-insensitive). */
    const search = (query: EndpointQuery, plan: PlanId) =>
      Effect.map(current, (endpoints) => {
        const words = (query.q ?? "").toLowerCase().split(/\s+/).filter((word) => word.length > 0)
        const price = toPublic(plan)
        const found: Array<CatalogueEndpointJson> = []
        for (const { row, text } of endpoints) {
          if (query.category !== undefined && row.category !== query.category) continue
          if (query.provider !== undefined && row.provider_id !== query.provider) continue
          if (query.availability !== undefined && row.availability !== query.availability) continue
          if (words.every((word) => text.includes(word))) found.push(price(row))
        }
        return found
      })

    return { load, search, counts: repo.counts } as const
  })
}) {}
