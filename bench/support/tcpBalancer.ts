import * as net from "node:net"

/**
 * A loopback load balancer for the replica benchmark, in a process of its own: each
 * incoming connection goes to the next of BALANCER_TARGETS (comma-separated `host:port`),
 * round robin, and its bytes are piped both ways. Balancing by connection is what a TCP
 * balancer in front of keep-alive clients does; it costs this process a copy of each byte,
 * the same for one replica behind it as for two. Prints `ready <port>` once it listens.
 */
const targets = (process.env.BALANCER_TARGETS ?? "").split(",").filter((t) => t.length > 0).map((target) => {
  const [host, port] = target.split(":")
  return { host: host!, port: Number(port) }
})
if (targets.length === 0) throw new Error("BALANCER_TARGETS names no replica")

let next = 0
const server = net.createServer((client) => {
  const target = targets[next++ % targets.length]!
  const upstream = net.connect(target)
  client.setNoDelay(true)
  upstream.setNoDelay(true)
  client.pipe(upstream).pipe(client)
  const close = () => {
    client.destroy()
    upstream.destroy()
  }
  client.on("error", close)
  upstream.on("error", close)
  client.on("close", close)
  upstream.on("close", close)
})
server.listen(0, "127.0.0.1", () => console.log(`ready ${(server.address() as net.AddressInfo).port}`))
