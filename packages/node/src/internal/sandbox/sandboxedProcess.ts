/**
 * A session's program inside bubblewrap, as the host sees it. bwrap with `--unshare-pid` runs as three
 * processes: the launcher the pty spawned (a `/bin/sh` that execs bwrap), its child — the pid namespace's
 * init — and the init's child, which execs the program; with `--network isolated` the launcher has one more
 * child, the network helper. The service must know the program's pid (readiness compares the terminal's
 * foreground group with the shell's), and teardown can end everything inside by killing the init.
 */
import type { PtyBackend } from "@agent-terminal/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import type { ProcReader } from "../teardown/procTable.js"
import { identityHolds, nodeProcReader, parseStat } from "../teardown/procTable.js"

/** The sandbox's processes, each with its start time (its identity together with the pid). */
export interface SandboxProcesses {
  readonly init: { readonly pid: number; readonly startTime: number }
  readonly program: { readonly pid: number; readonly startTime: number }
}

/** How to read the few `/proc` facts the search needs; a fake in unit tests. */
export interface LauncherView {
  readonly reader: ProcReader
  readonly children: (pid: number) => ReadonlyArray<number> | undefined
  /** The target of `/proc/<pid>/exe`; undefined when unreadable (gone, or a setuid bwrap). */
  readonly exe: (pid: number) => string | undefined
}

const readChildren = (pid: number): ReadonlyArray<number> | undefined => {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, "latin1").split(" ").filter((s) => s !== "").map(Number)
  } catch {
    return undefined
  }
}

/** The real `/proc`. */
export const nodeLauncherView: LauncherView = {
  reader: nodeProcReader,
  children: readChildren,
  exe: (pid) => {
    try {
      return fs.readlinkSync(`/proc/${pid}/exe`)
    } catch {
      return undefined
    }
  }
}

/** One look: the launcher died, the program is not there yet, or found. */
export type Search =
  | { readonly _tag: "LauncherGone" }
  | { readonly _tag: "NotYet" }
  | { readonly _tag: "Found"; readonly processes: SandboxProcesses }

const startTimeOf = (view: LauncherView, pid: number): number | undefined => {
  const text = view.reader.stat(pid)
  const info = text === undefined ? undefined : parseStat(text)
  return info === undefined || info.state === "Z" || info.state === "X" ? undefined : info.startTime
}

/**
 * Find the init and the program under the launcher. The launcher counts once it runs bwrap (`bwrapExe`,
 * when its `/proc/<pid>/exe` is readable; a setuid bwrap's is not), its init is the child that runs the same
 * binary (the launcher's other child, when it has one, is the network helper of `--network isolated`), and
 * the program counts as started once it no longer runs the bwrap binary (it exec'd): its pid is then the
 * one readiness and signals must use.
 */
export const search = (view: LauncherView, launcherPid: number, bwrapExe?: string): Search => {
  if (startTimeOf(view, launcherPid) === undefined) return { _tag: "LauncherGone" }
  const launcherExe = view.exe(launcherPid)
  if (bwrapExe !== undefined && launcherExe !== undefined && launcherExe !== bwrapExe) return { _tag: "NotYet" }
  const init = (view.children(launcherPid) ?? []).find((child) => view.exe(child) === launcherExe)
  if (init === undefined) return { _tag: "NotYet" }
  const program = view.children(init)?.[0]
  if (program === undefined) return { _tag: "NotYet" }
  const programExe = view.exe(program)
  if (programExe === undefined || programExe === launcherExe) return { _tag: "NotYet" }
  const initStart = startTimeOf(view, init)
  const programStart = startTimeOf(view, program)
  if (initStart === undefined || programStart === undefined) return { _tag: "NotYet" }
  return {
    _tag: "Found",
    processes: { init: { pid: init, startTime: initStart }, program: { pid: program, startTime: programStart } }
  }
}

const POLL_MS = 2

/**
 * Wait until the program runs inside the sandbox. `undefined` when the launcher is already gone: bwrap
 * refused to start (its complaint is in the session's output) or the program ran and exited at once — the
 * service's exit tier reports either. Fails with a reason when time runs out.
 */
export const locate = (
  view: LauncherView,
  launcherPid: number,
  timeoutMs: number,
  bwrapExe?: string
): Effect.Effect<SandboxProcesses | undefined, string> =>
  Effect.gen(function*() {
    const deadline = (yield* Clock.currentTimeMillis) + timeoutMs
    for (;;) {
      const found = search(view, launcherPid, bwrapExe)
      if (found._tag === "Found") return found.processes
      if (found._tag === "LauncherGone") return undefined
      if ((yield* Clock.currentTimeMillis) > deadline) {
        return yield* Effect.fail(`the program did not start inside the sandbox within ${timeoutMs} ms`)
      }
      yield* Effect.sleep(POLL_MS)
    }
  })

const SETTLE_MS = 2000

/** SIGKILL the namespace's init (by identity) and wait until it is gone: the kernel then kills everything inside. */
export const killInit = (
  view: LauncherView,
  init: SandboxProcesses["init"]
): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    if (!identityHolds(view.reader, init.pid, init.startTime)) return false
    try {
      process.kill(init.pid, "SIGKILL")
    } catch {
      return false
    }
    const deadline = (yield* Clock.currentTimeMillis) + SETTLE_MS
    while (identityHolds(view.reader, init.pid, init.startTime) && (yield* Clock.currentTimeMillis) < deadline) {
      yield* Effect.sleep(5)
    }
    return true
  })

/**
 * The session's process as the service must see it: the program's pid; on a backend without a cgroup, the
 * containment is the pid namespace — teardown runs the backend's graceful teardown, then kills the init so
 * nothing inside (a daemon that escaped the sweep) survives, and retries the backend's once if it failed.
 */
export const attach = (
  view: LauncherView,
  launched: PtyBackend.PtyProcess,
  processes: SandboxProcesses | undefined
): PtyBackend.PtyProcess => {
  if (processes === undefined) return launched
  if (launched.containment === "cgroup") return { ...launched, pid: processes.program.pid }
  const terminate = Effect.gen(function*() {
    const graceful = yield* Effect.either(launched.terminate)
    const killed = yield* killInit(view, processes.init)
    const report = graceful._tag === "Right" ? graceful.right : yield* launched.terminate
    return {
      containment: "pid-namespace" as const,
      signalled: report.signalled + (killed ? 1 : 0),
      survivors: report.survivors
    }
  })
  return { ...launched, pid: processes.program.pid, containment: "pid-namespace", terminate }
}
