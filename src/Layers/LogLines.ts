import { Context } from "effect"
import * as fs from "node:fs"

/** Lines waiting past this many characters are dropped (and counted) until the reader catches up. */
const MAX_WAITING_CHARS = 16 * 1024 * 1024

/**
 * The largest write to a pipe that lands whole: worker processes (WORKER_PROCESSES) share
 * one stdout, and a longer write may be interleaved with theirs in the middle of a line.
 */
const PIPE_BUF = 4096
const NEWLINE = 10

export interface LineWriter {
  /** Queues one line (without its newline); it is written within the current turn's batch. */
  readonly write: (line: string) => void
  /** Writes what is queued now, synchronously (at exit: nothing queued is lost). */
  readonly flushSync: () => void
  /** Resolves once every line queued so far has been written. */
  readonly drained: () => Promise<void>
}

/**
 * Log lines to a file descriptor without blocking the event loop. Node writes to a pipe
 * synchronously (stdout under a container runtime or a process manager), so every
 * `console.log` waited on the reader: with the access log on, a sixth of a cheap request's
 * profile was that write. Here the lines of one turn are joined and written by libuv's
 * thread pool (`fs.write`), one write at a time and in order, each of whole lines and at
 * most 4 KB (one atomic pipe write); the event loop only appends to a string. A reader that
 * stops for long does not grow the process without bound: past 16 MB waiting, lines are
 * dropped and a line says how many.
 */
export const makeLineWriter = (
  fd: number,
  options: {
    /** The line saying how many were dropped, in the log's own format. */
    readonly droppedLine: (count: number) => string
    readonly maxWaitingChars?: number
  }
): LineWriter => {
  const maxWaitingChars = options.maxWaitingChars ?? MAX_WAITING_CHARS
  let waiting = ""
  let dropped = 0
  let writing = false
  let scheduled = false
  let idle: Array<() => void> = []

  const take = () => {
    let text = waiting
    if (dropped > 0) text += options.droppedLine(dropped) + "\n"
    waiting = ""
    dropped = 0
    return text
  }

  const settleIdle = () => {
    if (writing || scheduled || waiting.length > 0) return
    const resolved = idle
    idle = []
    for (const resolve of resolved) resolve()
  }

  /** Where the next write ends: whole lines, at most one atomic pipe write where they fit. */
  const pieceEnd = (buffer: Buffer, offset: number) => {
    if (buffer.length - offset <= PIPE_BUF) return buffer.length
    const lastNewline = buffer.lastIndexOf(NEWLINE, offset + PIPE_BUF - 1)
    if (lastNewline >= offset) return lastNewline + 1
    // One line longer than that: written whole, as a console write would.
    return buffer.indexOf(NEWLINE, offset) + 1
  }

  const writeOut = (buffer: Buffer, offset: number) => {
    fs.write(fd, buffer, offset, pieceEnd(buffer, offset) - offset, null, (error, written) => {
      if (error !== null && error.code === "EAGAIN") {
        // A non-blocking descriptor with a full pipe: try again shortly.
        setTimeout(() => writeOut(buffer, offset), 1)
        return
      }
      if (error === null && offset + written < buffer.length) return writeOut(buffer, offset + written)
      // Any other error (the reader went away): the batch is lost, as a console write's would be.
      writing = false
      startWrite()
    })
  }

  const startWrite = () => {
    scheduled = false
    if (writing || (waiting.length === 0 && dropped === 0)) return settleIdle()
    writing = true
    writeOut(Buffer.from(take()), 0)
  }

  return {
    write: (line) => {
      if (waiting.length > maxWaitingChars) {
        dropped++
        return
      }
      waiting += line + "\n"
      if (!scheduled && !writing) {
        scheduled = true
        setImmediate(startWrite)
      }
    },
    flushSync: () => {
      const text = take()
      if (text.length > 0) fs.writeSync(fd, text)
    },
    drained: () =>
      new Promise((resolve) => {
        idle.push(resolve)
        settleIdle()
      })
  }
}

/**
 * Where the service's log lines go instead of stdout, when provided: a test running the
 * service in its own process reads them here (they no longer pass through `console.log`).
 */
export class LogLineSink extends Context.Tag("Layers/LogLineSink")<LogLineSink, {
  readonly write: (line: string) => void
}>() {}
