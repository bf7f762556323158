import { Errors, Ids, PtyService, type Sandbox, type Session } from "@agent-terminal/core"
import { NodeTerminal } from "@agent-terminal/node"
import { afterAll } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { testConfig } from "../support/terminal.js"

/**
 * A fresh workspace directory for one test file (under /tmp, which the sandbox replaces with a private one,
 * so the workspace bind is exercised); removed after the file's tests.
 */
export const makeWorkspace = (label: string): string => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `at-${label}-`)))
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** The real service with the bubblewrap sandbox as every owner's default. */
export const SandboxedTerminal = (
  sandbox: NodeTerminal.SandboxOptions,
  options: { readonly containment?: "auto" | "sweep" } = {}
) => NodeTerminal.layer(testConfig, { sandbox, ...options })

/** The failure of an exit, when it failed with a typed error. */
export const failureOf = <A, E>(exit: Exit.Exit<A, E>): E | undefined =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined

/** Open a session for `owner`; it is closed when the test's scope ends. */
export const openAs = (owner: Ids.OwnerId, request: Session.OpenRequest = {}) =>
  Effect.gen(function*() {
    const service = yield* PtyService.PtyService
    const opened = yield* service.open(owner, request)
    const id = Ids.SessionId.make(opened.sessionId)
    yield* Effect.addFinalizer(() => service.close(owner, id).pipe(Effect.ignore))
    const send = (text: string, options: Omit<Session.SendRequest, "text"> = {}) =>
      service.send(owner, id, { text, ...options })
    return { service, id, opened, send }
  })

/** Pids whose command line is exactly `argv` (how the host finds a process started inside a sandbox). */
export const pidsByArgv = (argv: ReadonlyArray<string>): Array<number> => {
  const wanted = argv.join("\0") + "\0"
  const out: Array<number> = []
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (fs.readFileSync(`/proc/${name}/cmdline`, "latin1") === wanted) out.push(Number(name))
    } catch {
      // gone
    }
  }
  return out
}

/** A TCP server on the host's loopback, counting connections; closed with the scope. */
export const loopbackServer = Effect.acquireRelease(
  Effect.async<{ readonly port: number; readonly connections: () => number; readonly server: net.Server }>(
    (resume) => {
      let connections = 0
      const server = net.createServer((socket) => {
        connections++
        socket.end("hello from the host\n")
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address() as net.AddressInfo
        resume(Effect.succeed({ port: address.port, connections: () => connections, server }))
      })
    }
  ),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.close(() => resume(Effect.void))
    })
)

/** Whether the exit failed with `SandboxUnavailable`. */
export const isUnavailable = (error: unknown): error is Errors.SandboxUnavailable =>
  error instanceof Errors.SandboxUnavailable

export type Policy = Sandbox.Policy

/** The pids running `argv`, once at least one runs (a daemon started in the background takes a moment). */
export const waitForPids = (argv: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 200; i++) {
      const pids = pidsByArgv(argv)
      if (pids.length > 0) return pids
      yield* Effect.sleep(25)
    }
    return []
  })
