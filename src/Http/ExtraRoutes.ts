import type { RouteSpec } from "./RouteTable.js"

/** Routes served beside the HttpApi groups (documentation UI, OpenAPI document). */
export const extraRoutes: ReadonlyArray<RouteSpec> = [
  { method: "GET", path: "/docs" },
  { method: "GET", path: "/openapi.json" },
  { method: "POST", path: "/mcp" }
]
