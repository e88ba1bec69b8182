import * as fs from "node:fs"

/**
 * CPU time from /proc (Linux): a process's user + system time, and the sum over every
 * PostgreSQL process on the machine, in milliseconds. Clock ticks are 100 a second here
 * (`getconf CLK_TCK`).
 */
const TICK_MS = 10

const ticksOf = (stat: string) => {
  // Fields after the command name (which may hold spaces): state is the first, utime the 12th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return Number(fields[11]) + Number(fields[12])
}

const parentOf = (stat: string) => Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])

export const processCpuMs = (pid: number) => ticksOf(fs.readFileSync(`/proc/${pid}/stat`, "utf8")) * TICK_MS

/**
 * The CPU of services made of several processes, in milliseconds: each pid's own and its
 * children's (the workers of WORKER_PROCESSES), summed.
 */
export const servicesCpuMs = (pids: ReadonlyArray<number>) => {
  let ms = 0
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      if (pids.includes(Number(entry)) || pids.includes(parentOf(stat))) ms += ticksOf(stat) * TICK_MS
    } catch {
      // The process ended while the list was read.
    }
  }
  return ms
}

let postmaster: number | undefined

/**
 * Counts only the PostgreSQL server the benchmarks use (the postmaster that forked the
 * backend `backendPid`, and its children), so other clusters on the machine (tests start
 * private ones) do not add to a benchmark's figures.
 */
export const measurePostgresOf = (backendPid: number) => {
  postmaster = parentOf(fs.readFileSync(`/proc/${backendPid}/stat`, "utf8"))
}

/** Each PostgreSQL process's CPU ticks so far, by pid. */
export const postgresTicks = (): ReadonlyMap<string, number> => {
  const ticks = new Map<string, number>()
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      const ours = postmaster === undefined || Number(entry) === postmaster || parentOf(stat) === postmaster
      if (stat.includes("(postgres)") && ours) ticks.set(entry, ticksOf(stat))
    } catch {
      // The process ended while the list was read.
    }
  }
  return ticks
}

/**
 * PostgreSQL's CPU between two readings, in milliseconds: per process, so one that started
 * in between counts whole and one that ended counts nothing (it cannot make the sum fall).
 */
export const postgresCpuMsBetween = (before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>) => {
  let ticks = 0
  for (const [pid, now] of after) ticks += now - (before.get(pid) ?? 0)
  return ticks * TICK_MS
}
