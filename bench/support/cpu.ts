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

export const processCpuMs = (pid: number) => ticksOf(fs.readFileSync(`/proc/${pid}/stat`, "utf8")) * TICK_MS

/** Each PostgreSQL process's CPU ticks so far, by pid. */
export const postgresTicks = (): ReadonlyMap<string, number> => {
  const ticks = new Map<string, number>()
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      if (stat.includes("(postgres)")) ticks.set(entry, ticksOf(stat))
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
