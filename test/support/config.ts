import { ConfigProvider } from "effect"

/** The service's configuration in a test: `env` as a map (on a free port), never the process environment. */
export const configOf = (env: Record<string, string>) =>
  ConfigProvider.fromMap(new Map(Object.entries({ PORT: "0", ...env })))
