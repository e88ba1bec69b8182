import { Effect } from "effect"

type ProviderModule = typeof import("oidc-provider")

/**
 * oidc-provider, imported when the authorization server is built. The library writes its
 * notices with `console.warn`/`console.info` as it loads (on the pinned Node 20 it says it
 * prefers Node 22); they are caught and passed to the service's logger, so every line the
 * service writes keeps LOG_FORMAT's format.
 */
export const importProviderModule: Effect.Effect<ProviderModule> = Effect.acquireUseRelease(
  Effect.sync(() => {
    const saved = { warn: console.warn, info: console.info }
    const notices: Array<string> = []
    const keep = (...parts: Array<unknown>) => void notices.push(parts.map(String).join(" "))
    console.warn = keep
    console.info = keep
    return { saved, notices }
  }),
  ({ notices }) =>
    Effect.promise(() => import("oidc-provider")).pipe(
      Effect.tap(() => Effect.forEach(notices, (notice) => Effect.logWarning(notice), { discard: true }))
    ),
  ({ saved }) =>
    Effect.sync(() => {
      console.warn = saved.warn
      console.info = saved.info
    })
)
