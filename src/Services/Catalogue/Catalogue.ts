import { Effect, Schema } from "effect"
import {
  type Availability,
  type CatalogueEndpoint,
  CatalogueEntry,
  type Category,
  Provider
} from "../../Domain/Catalogue.js"
import { gatewayPrice, type PlanId } from "../../Domain/Plans.js"
import { readDataFile } from "../DataFiles.js"
import { CatalogueRepo, type EndpointRow } from "./CatalogueRepo.js"

export interface EndpointQuery {
  readonly q?: string | undefined
  readonly category?: Category | undefined
  readonly provider?: string | undefined
  readonly availability?: Availability | undefined
}

/** The gateway catalogue: loaded from ./data at start, searched and priced per plan. */
export class Catalogue extends Effect.Service<Catalogue>()("Catalogue/Catalogue", {
  dependencies: [CatalogueRepo.Default],
  effect: Effect.gen(function*() {
    const repo = yield* CatalogueRepo

    const load = Effect.gen(function*() {
      const providers = yield* readDataFile("catalogue/providers.json", Schema.Array(Provider))
      const endpoints = yield* readDataFile("catalogue/endpoints.json", Schema.Array(CatalogueEntry))
      yield* repo.upsert(providers, endpoints)
      return { providers: providers.length, endpoints: endpoints.length }
    })

    const toPublic = (plan: PlanId) => (row: EndpointRow): CatalogueEndpoint => ({
      id: row.id,
      provider: row.provider_id,
      provider_name: row.provider_name,
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
      repo.search({
        words: (query.q ?? "").split(/\s+/).filter((word) => word.length > 0),
        category: query.category,
        provider: query.provider,
        availability: query.availability
      }).pipe(Effect.map((rows) => rows.map(toPublic(plan))))

    return { load, search, counts: repo.counts } as const
  })
}) {}
