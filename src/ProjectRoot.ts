/**
 * The project's root folder (where data/ and web/dist are), as a URL ending in "/". This
 * file is one folder below the root, and so is the service's build (dist/service.mjs, which
 * holds this module): the same relative path finds the root from either.
 */
export const projectRoot = new URL("../", import.meta.url)
