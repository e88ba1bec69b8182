import { type ChildProcess, spawn } from "node:child_process"
import pg from "pg"
import { randomBytes } from "node:crypto"

/**
 * Starts the service as a child process (as `npm start` would) on a fresh database of the
 * local PostgreSQL, and stops it afterwards. Benchmarks measure it from outside.
 */
export const benchServerUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"

export const createBenchDatabase = async () => {
  const name = `bench_${randomBytes(4).toString("hex")}`
  const admin = new pg.Client({ connectionString: benchServerUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(benchServerUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: benchServerUrl })
      await client.connect()
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await client.end()
    }
  }
}

export interface RunningService {
  readonly url: string
  readonly process: ChildProcess
  readonly stop: () => Promise<void>
}

export const startService = (env: Record<string, string>): Promise<RunningService> =>
  new Promise((resolve, reject) => {
    // BENCH_NODE_ARGS passes flags to the service's Node, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
    const nodeArgs = (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter((arg) => arg.length > 0)
    const child = spawn(process.execPath, [...nodeArgs, "--import", "tsx", "src/main.ts"], {
      env: { ...process.env, PORT: "0", LOG_LEVEL: "Info", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /Service ready at (http:\/\/localhost:\d+)/.exec(output)
      if (match) {
        child.stdout!.off("data", onData)
        resolve({
          url: match[1]!.replace("localhost", "127.0.0.1"),
          process: child,
          stop: () =>
            new Promise((done) => {
              child.once("exit", () => done())
              child.kill("SIGTERM")
            })
        })
      }
    }
    child.stdout!.on("data", onData)
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()))
    child.once("exit", (code) => reject(new Error(`service exited (${code}) before it was ready:\n${output}`)))
  })
