import { type ChildProcess, spawn } from "node:child_process"
import { serviceCommand } from "./serviceBuild.js"

/**
 * The service as a child process, started as `npm start` runs it (its build), for tests that
 * kill it (SIGKILL) at a chosen moment and start it again on the same database.
 */
export interface ChildService {
  readonly url: string
  readonly process: ChildProcess
  /** Everything it printed so far (standard output and error). */
  readonly output: () => string
}

export const startChildService = (
  env: Record<string, string>,
  /** The process's limits on open files (sockets included), as prlimit takes them: "soft:hard". */
  options: { readonly openFiles?: `${number}:${number}` } = {}
) =>
  new Promise<ChildService>((resolve, reject) => {
    // The test runner's environment carries BASE_URL ("/", from Vite): not for the service.
    const { BASE_URL: _base, ...inherited } = process.env
    const command = serviceCommand()
    const [file, ...args] = options.openFiles === undefined
      ? command
      : ["prlimit", `--nofile=${options.openFiles}`, "--", ...command]
    const child = spawn(file!, args, {
      env: { ...inherited, PORT: "0", LOG_LEVEL: "Info", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /Service ready at http:\/\/localhost:(\d+)/.exec(output)
      if (match) {
        child.stdout!.off("data", onData)
        child.stdout!.on("data", (more: Buffer) => (output += more.toString()))
        resolve({ url: `http://127.0.0.1:${match[1]}`, process: child, output: () => output })
      }
    }
    child.stdout!.on("data", onData)
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()))
    child.once(
      "exit",
      (code, signal) => reject(new Error(`service exited (${code ?? signal}) before ready:\n${output}`))
    )
  })

export const killChildService = (child: ChildService) =>
  new Promise<void>((resolve) => {
    if (child.process.exitCode !== null || child.process.signalCode !== null) return resolve()
    child.process.once("exit", () => resolve())
    child.process.kill("SIGKILL")
  })
