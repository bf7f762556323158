import { Ids, PtyService, type Session, TerminalConfig } from "@agent-terminal/core"
import { NodeTerminal } from "@agent-terminal/node"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/** Settings lowered for tests: short idle bound, generous timeouts (tests assert behaviour, not speed). */
export const testConfig: TerminalConfig.TerminalConfigInput = {
  idleSilenceMs: 1500,
  timeoutMs: 20_000,
  openTimeoutMs: 15_000,
  disposeGraceMs: 1000
}

/** The real service on this host: node-pty, /proc, bash. */
export const TestTerminal = (config: TerminalConfig.TerminalConfigInput = {}) =>
  NodeTerminal.layer({ ...testConfig, ...config })

export const owner = Ids.OwnerId.make("test-owner")
export const otherOwner = Ids.OwnerId.make("other-owner")

/** Open a shell for one test; it is closed when the test's scope ends. */
export const openShell = (request: Session.OpenRequest = {}) =>
  Effect.gen(function*() {
    const service = yield* PtyService.PtyService
    const opened = yield* service.open(owner, request)
    const id = Ids.SessionId.make(opened.sessionId)
    yield* Effect.addFinalizer(() => service.close(owner, id).pipe(Effect.ignore))
    const send = (text: string, options: Omit<Parameters<typeof service.send>[2], "text"> = {}) =>
      service.send(owner, id, { text, ...options })
    const keys = (names: ReadonlyArray<string>, options: Omit<Parameters<typeof service.send>[2], "keys"> = {}) =>
      service.send(owner, id, { keys: names, ...options })
    return { service, id, opened, send, keys }
  })

/** Whether a process is alive (zombies count as gone). */
export const alive = (pid: number): boolean => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
    return state !== "Z" && state !== "X"
  } catch {
    return false
  }
}

/** The typed failure of an exit, if it failed with one. */
export const failureOf = <A, E>(exit: Exit.Exit<A, E>): E | undefined =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined

/** A temporary directory, removed when the test's scope closes (after the sessions opened in it). */
export const tempDir = (prefix = "agent-terminal-") =>
  Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), prefix))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )

/** The parent of a process (0 once it is gone). */
export const parentOf = (pid: number): number => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
  } catch {
    return 0
  }
}

/** This process's live children (the shells it spawned on ptys, and their cgroup-joining `sh`). */
export const children = (): Array<number> =>
  fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).map(Number).filter((pid) =>
    parentOf(pid) === process.pid && alive(pid)
  )
