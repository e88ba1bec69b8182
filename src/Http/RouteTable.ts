import type { HttpApi } from "@effect/platform"

/**
 * Which paths exist and with which methods, so an unknown path answers 404 `not_found`
 * and a known path with another method answers 405 `method_not_allowed` with `Allow`.
 * A `*` segment matches the rest of the path (the dashboard's own pages).
 */
export interface RouteSpec {
  readonly method: string
  readonly path: string
}

export type RouteMatch =
  | { readonly _tag: "Found"; readonly route: string }
  | { readonly _tag: "NotFound" }
  | { readonly _tag: "MethodNotAllowed"; readonly allow: ReadonlyArray<string> }

export const routesOfApi = (api: HttpApi.HttpApi.Any): ReadonlyArray<RouteSpec> => {
  const routes: Array<RouteSpec> = []
  const groups = (api as unknown as HttpApi.HttpApi.AnyWithProps).groups
  for (const group of Object.values(groups)) {
    for (const endpoint of Object.values(group.endpoints)) {
      routes.push({ method: endpoint.method, path: endpoint.path })
    }
  }
  return routes
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const patternOf = (path: string): RegExp =>
  new RegExp(
    "^" +
      path.split("/").map((segment) =>
        segment === "*" ? ".*" : segment.startsWith(":") ? "[^/]+" : escapeRegExp(segment)
      ).join("/") +
      "/?$"
  )

export const makeRouteTable = (routes: ReadonlyArray<RouteSpec>) => {
  const byPattern = new Map<string, { pattern: RegExp; route: string; methods: Set<string> }>()
  for (const route of routes) {
    const pattern = patternOf(route.path)
    const entry = byPattern.get(pattern.source) ?? { pattern, route: route.path, methods: new Set<string>() }
    entry.methods.add(route.method.toUpperCase())
    byPattern.set(pattern.source, entry)
  }
  const entries = Array.from(byPattern.values())
  return {
    match: (method: string, pathname: string): RouteMatch => {
      const allowed = new Set<string>()
      for (const entry of entries) {
        if (!entry.pattern.test(pathname)) continue
        if (entry.methods.has(method.toUpperCase())) return { _tag: "Found", route: entry.route }
        entry.methods.forEach((m) => allowed.add(m))
      }
      return allowed.size === 0 ? { _tag: "NotFound" } : { _tag: "MethodNotAllowed", allow: Array.from(allowed).sort() }
    }
  }
}
