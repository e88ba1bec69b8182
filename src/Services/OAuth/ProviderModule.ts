import { Effect } from "effect"

type ProviderModule = typeof import("oidc-provider")

/**
 * The library's warning that it prefers Node 22 (it checks for an LTS line from 22 on). The
 * project supports Node 20.19 and later (package.json `engines`), where the library is
 * tested and works, so the warning says nothing to act on and is left out of the log.
 */
const runtimeWarning = /^oidc-provider WARNING: Unsupported runtime\. Use Node\.js v22/

/**
 * oidc-provider, imported when the authorization server is built. The library writes its
 * notices with `console.warn`/`console.info` as it loads; they are caught and passed to the
 * service's logger, so every line the service writes keeps LOG_FORMAT's format, all but
 * the runtime warning above.
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
      Effect.tap(() =>
        Effect.forEach(
          notices.filter((notice) => !runtimeWarning.test(notice)),
          (notice) => Effect.logWarning(notice),
          { discard: true }
        )
      )
    ),
  ({ saved }) =>
    Effect.sync(() => {
      console.warn = saved.warn
      console.info = saved.info
    })
)
