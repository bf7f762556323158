/**
 * A second machine for the network tests, made on this one: a network namespace joined to the host by a veth
 * pair (`TestFleet.networkNamespaceOf`), with addresses in a private range that exists only here (10.213.N.0/30),
 * and a TCP server in it that greets every connection. Needs root and iproute2 (`ip netns`); removed with the scope.
 */
import { TestFleet } from "@agent-terminal/fleet"
import * as Effect from "effect/Effect"
import * as childProcess from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"

/** Whether this host can make a test host (root, `ip` on PATH). */
export const canMakeTestHost = TestFleet.canMakeNetworkNamespace

const SERVER = [
  "import socket, sys",
  "s = socket.socket()",
  "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)",
  "s.bind((sys.argv[1], 0))",
  "s.listen(16)",
  "print(s.getsockname()[1], flush=True)",
  "while True:",
  "    c, _ = s.accept()",
  "    c.sendall(b'hello from the test host\\n')",
  "    c.close()"
].join("\n")

/** The test host: its address and the port of its greeting server. */
export interface TestHost {
  readonly address: string
  readonly port: number
}

/** Make the test host; everything is removed when the scope closes (the server first, then the namespace). */
export const testHost = Effect.gen(function*() {
  const { address, name } = yield* TestFleet.networkNamespaceOf({ prefix: "at-test", link: "at", octet: 213 })
  return yield* Effect.acquireRelease(
    Effect.async<{ readonly port: number; readonly stop: () => Promise<void> }, Error>((resume) => {
      const server = childProcess.spawn("ip", ["netns", "exec", name, "python3", "-c", SERVER, address], {
        stdio: ["ignore", "pipe", "inherit"]
      })
      const exited = new Promise<void>((resolve) => server.once("exit", () => resolve()))
      const stop = async () => {
        server.kill("SIGKILL")
        await exited
      }
      let out = ""
      server.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8")
        const port = Number(out.split("\n")[0])
        if (out.includes("\n") && port > 0) resume(Effect.succeed({ port, stop }))
      })
      server.once("exit", (code) => resume(Effect.fail(new Error(`the test host's server exited (${code})`))))
    }),
    ({ stop }) => Effect.promise(stop)
  ).pipe(Effect.map(({ port }): TestHost => ({ address, port })))
})

/**
 * A Unix socket server at `file` (under the host's `/run`, say), accepting and counting connections; removed
 * with the scope.
 */
export const unixServer = (file: string) =>
  Effect.acquireRelease(
    Effect.async<{ readonly connections: () => number; readonly server: net.Server }>((resume) => {
      let connections = 0
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.rmSync(file, { force: true })
      const server = net.createServer((socket) => {
        connections++
        socket.end("hello from the host socket\n")
      })
      server.listen(file, () => resume(Effect.succeed({ connections: () => connections, server })))
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.close(() => {
          fs.rmSync(file, { force: true })
          resume(Effect.void)
        })
      })
  )

/** Pids of the network tools (pasta, slirp4netns) running now. */
export const networkToolPids = (): ReadonlyArray<number> =>
  fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).flatMap((name) => {
    try {
      const exe = path.basename(fs.readlinkSync(`/proc/${name}/exe`))
      return exe.startsWith("passt") || exe.startsWith("pasta") || exe === "slirp4netns" ? [Number(name)] : []
    } catch {
      return []
    }
  })

const ABSTRACT_SERVER = [
  "import socket, sys",
  "s = socket.socket(socket.AF_UNIX)",
  "s.bind('\\0' + sys.argv[1])",
  "s.listen(16)",
  "print('ready', flush=True)",
  "while True:",
  "    c, _ = s.accept()",
  "    print('connection', flush=True)",
  "    c.sendall(b'hello from the abstract socket\\n')",
  "    c.close()"
].join("\n")

/**
 * An abstract Unix socket of the host (a name, no file: D-Bus and X11 use them), served by python: node 20
 * binds abstract names padded to the whole address, which no other program can connect to. Abstract names
 * belong to the network namespace.
 */
export const abstractServer = Effect.acquireRelease(
  Effect.async<
    { readonly name: string; readonly connections: () => number; readonly stop: () => Promise<void> },
    Error
  >(
    (resume) => {
      const name = `agent-terminal-abstract-${process.pid}-${crypto.randomBytes(3).toString("hex")}`
      const server = childProcess.spawn("python3", ["-c", ABSTRACT_SERVER, name], {
        stdio: ["ignore", "pipe", "inherit"]
      })
      const exited = new Promise<void>((resolve) => server.once("exit", () => resolve()))
      let out = ""
      server.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8")
        if (out.startsWith("ready\n")) {
          resume(Effect.succeed({
            name,
            connections: () => out.split("\n").filter((line) => line === "connection").length,
            stop: async () => {
              server.kill("SIGKILL")
              await exited
            }
          }))
        }
      })
      server.once("exit", (code) => resume(Effect.fail(new Error(`the abstract socket server exited (${code})`))))
    }
  ),
  ({ stop }) => Effect.promise(stop)
)
