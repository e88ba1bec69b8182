import { type ChildProcess, spawn } from "node:child_process"
import * as net from "node:net"
import { eventually } from "./world.js"

/**
 * A redis-server of the test's own on a free loopback port (never the shared one), which the
 * test may pause (SIGSTOP: connections stay open, nothing is answered), kill and start again
 * on the same port. Nothing is persisted: a restart starts empty. `close` kills it.
 */
export interface PrivateRedis {
  readonly port: number
  readonly url: string
  /** Starts it again after a `kill` (same port), once it accepts connections. */
  readonly start: () => Promise<void>
  /** SIGKILL: connections are closed and new ones refused. */
  readonly kill: () => Promise<void>
  readonly pause: () => void
  readonly resume: () => void
  readonly close: () => Promise<void>
}

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
    server.on("error", reject)
  })

/** Whether something accepts connections on the port. */
export const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, "127.0.0.1")
    socket.once("connect", () => (socket.destroy(), resolve(true)))
    socket.once("error", () => resolve(false))
  })

export const startPrivateRedis = async (): Promise<PrivateRedis> => {
  const port = await freePort()
  let child: ChildProcess | undefined
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null
  const start = async () => {
    child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
      stdio: "ignore"
    })
    await eventually(() => listening(port), { timeoutMs: 60_000, what: `the private Redis on port ${port}` })
  }
  const kill = () =>
    new Promise<void>((resolve) => {
      if (!running()) return resolve()
      child!.once("exit", () => resolve())
      child!.kill("SIGKILL")
    })
  await start()
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    start,
    kill,
    pause: () => void child?.kill("SIGSTOP"),
    resume: () => void child?.kill("SIGCONT"),
    close: kill
  }
}
