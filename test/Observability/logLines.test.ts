import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { makeLineWriter } from "../../src/Layers/LogLines.js"
import { eventually } from "../support/eventually.js"

const droppedLine = (count: number) => `dropped ${count}`

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "log-lines-"))

describe("log lines (Layers/LogLines.ts)", () => {
  it("writes every line once, in order, over several turns of the event loop", async () => {
    const file = path.join(tempDir(), "out.log")
    const fd = fs.openSync(file, "w")
    const writer = makeLineWriter(fd, { droppedLine })
    const expected: Array<string> = []
    for (let turn = 0; turn < 20; turn++) {
      for (let i = 0; i < 500; i++) {
        const line = `turn=${turn} line=${i}`
        expected.push(line)
        writer.write(line)
      }
      await new Promise((resolve) => setImmediate(resolve))
    }
    await writer.drained()
    fs.closeSync(fd)
    expect(fs.readFileSync(file, "utf8")).toBe(expected.join("\n") + "\n")
  })

  it("does not hold up the event loop while the reader does not read, and drops lines past its bound", async () => {
    const fifo = path.join(tempDir(), "pipe")
    execFileSync("mkfifo", [fifo])
    // Read-write open: no reader needed to open it; writes wait once its 64 KB are full.
    const fd = fs.openSync(fifo, fs.constants.O_RDWR)
    const writer = makeLineWriter(fd, { droppedLine, maxWaitingChars: 200_000 })
    const line = "x".repeat(99)
    for (let i = 0; i < 1_000; i++) writer.write(line) // 100 KB: the pipe fills and the write waits
    // One turn: the writer's turn, queued first, hands the batch to the pipe.
    await new Promise((resolve) => setImmediate(resolve))
    // The event loop turned although the write is still waiting; these queue up to the bound.
    for (let i = 0; i < 3_000; i++) writer.write(line)
    const reader = fs.createReadStream(fifo)
    let text = ""
    reader.on("data", (chunk) => (text += chunk.toString()))
    await writer.drained()
    // The count of dropped lines comes last: read up to it.
    await eventually(() => /dropped \d+\n$/.test(text), { intervalMs: 20, what: "the count of dropped lines" })
    reader.destroy()
    fs.closeSync(fd)
    const lines = text.split("\n").filter((l) => l.length > 0)
    const kept = lines.filter((l) => l === line).length
    // 1,000 in the first batch, 2,001 queued before the bound was passed (100 characters each).
    expect(kept).toBe(3_001)
    expect(lines.at(-1)).toBe("dropped 999")
  })

  it("keeps lines whole when several writers share one pipe (worker processes)", async () => {
    const fifo = path.join(tempDir(), "shared")
    execFileSync("mkfifo", [fifo])
    const fd = fs.openSync(fifo, fs.constants.O_RDWR)
    const reader = fs.createReadStream(fifo)
    let text = ""
    reader.on("data", (chunk) => (text += chunk.toString()))
    const writers = [makeLineWriter(fd, { droppedLine }), makeLineWriter(fd, { droppedLine })]
    const lines = ["a".repeat(150), "b".repeat(150)]
    // One turn each: two batches of 1.5 MB written at once by two threads of the pool.
    for (let i = 0; i < 10_000; i++) writers.forEach((writer, w) => writer.write(lines[w]!))
    await Promise.all(writers.map((writer) => writer.drained()))
    await eventually(() => text.length >= 2 * 10_000 * 151, { intervalMs: 20, what: "every line read" })
    reader.destroy()
    fs.closeSync(fd)
    const read = text.split("\n").slice(0, -1)
    expect(read.filter((line) => line === lines[0])).toHaveLength(10_000)
    expect(read.filter((line) => line === lines[1])).toHaveLength(10_000)
  })

  it("writes what is queued when the process exits at once", () => {
    const module = path.resolve("src/Layers/LogLines.ts")
    const script = `
      import { makeLineWriter } from ${JSON.stringify(module)}
      const writer = makeLineWriter(1, { droppedLine: (count) => "dropped " + count })
      process.once("exit", writer.flushSync)
      for (let i = 0; i < 100; i++) writer.write("line " + i)
      process.exit(0)`
    const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      encoding: "utf8"
    })
    expect(out).toBe(Array.from({ length: 100 }, (_, i) => `line ${i}\n`).join(""))
  })
})
