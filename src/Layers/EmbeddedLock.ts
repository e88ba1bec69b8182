import { Data, Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"

/**
 * One process at a time on the embedded database: PGlite keeps its files in DATA_DIR and
 * two processes opening them each work on their own copy, so what one writes (an admin
 * credit while the service runs) the other later overwrites. The holder writes its pid to
 * DATA_DIR/embedded.lock (created exclusively) and removes it on close; a lock left by a
 * process that no longer runs is taken over.
 */
export class EmbeddedDatabaseInUse extends Data.TaggedError("EmbeddedDatabaseInUse")<{
  readonly dataDir: string
  readonly pid: number
}> {
  override get message() {
    return `The embedded database in ${this.dataDir} is in use by process ${this.pid} (the running service?). ` +
      "Stop that process first, or point DATABASE_URL at a PostgreSQL server both can share."
  }
}

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const tryCreate = (lockFile: string): boolean => {
  try {
    fs.writeFileSync(lockFile, String(process.pid), { flag: "wx" })
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false
    throw error
  }
}

const holderOf = (lockFile: string): number | undefined => {
  try {
    const pid = Number(fs.readFileSync(lockFile, "utf8").trim())
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

const acquire = (dataDir: string) =>
  Effect.suspend(() => {
    const lockFile = path.join(dataDir, "embedded.lock")
    for (let attempt = 0; attempt < 3; attempt++) {
      if (tryCreate(lockFile)) return Effect.succeed(lockFile)
      const holder = holderOf(lockFile)
      if (holder !== undefined && holder !== process.pid && isRunning(holder)) {
        return Effect.fail(new EmbeddedDatabaseInUse({ dataDir: path.resolve(dataDir), pid: holder }))
      }
      // Left by a process that is gone (or unreadable mid-write): take it over.
      fs.rmSync(lockFile, { force: true })
    }
    return Effect.fail(new EmbeddedDatabaseInUse({ dataDir: path.resolve(dataDir), pid: holderOf(lockFile) ?? 0 }))
  })

/** Holds the lock for the scope's lifetime. */
export const holdEmbeddedLock = (dataDir: string) =>
  Effect.acquireRelease(acquire(dataDir), (lockFile) =>
    Effect.sync(() => {
      if (holderOf(lockFile) === process.pid) fs.rmSync(lockFile, { force: true })
    }))
