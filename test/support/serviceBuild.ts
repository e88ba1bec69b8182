import { fileURLToPath } from "node:url"

/**
 * The service and its admin command as `npm start` and `npm run admin` run them: their build,
 * dist/service.mjs and dist/admin.mjs (scripts/build-service.mjs), made anew once a run by
 * the global setup, so a child process runs the sources as they are.
 */
const built = (name: string) => fileURLToPath(new URL(`../../dist/${name}.mjs`, import.meta.url))

/** The command and arguments that start the service, with Node's own flags before the file. */
export const serviceCommand = (nodeArgs: ReadonlyArray<string> = []): [string, ...Array<string>] => [
  process.execPath,
  "--enable-source-maps",
  ...nodeArgs,
  built("service")
]

/** The command and arguments that run the admin command with `args`. */
export const adminCommand = (args: ReadonlyArray<string>): [string, ...Array<string>] => [
  process.execPath,
  "--enable-source-maps",
  built("admin"),
  ...args
]
