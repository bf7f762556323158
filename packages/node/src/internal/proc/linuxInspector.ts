/**
 * The Linux inspector assembled from its parts, over any `ProcFs` (the real `/proc` or a fixture).
 */
import { ProcessInspector } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import { foregroundActivity } from "./activity.js"
import { foregroundGroup, inspect, processTable } from "./foregroundProbe.js"
import { listening } from "./listening.js"
import type { ProcFs } from "./procFs.js"
import type { Arch } from "./syscalls.js"
import { terminalModes } from "./termios.js"
import { descendants, toProcessInfo } from "./tree.js"

const guarded = <A>(fallback: (cause: unknown) => A, f: () => A): A => {
  try {
    return f()
  } catch (cause) {
    return fallback(cause)
  }
}

/** The inspector over a `/proc` reader and a syscall table; `arch` undefined makes every probe a miss. */
export const makeWith = (options: {
  readonly procFs: ProcFs
  readonly arch: Arch | undefined
}): ProcessInspector.ProcessInspector["Type"] => {
  const { arch, procFs } = options
  return ProcessInspector.ProcessInspector.of({
    exact: arch !== undefined,
    foregroundGroup: (terminal) =>
      Effect.sync(() =>
        guarded(() => Option.none(), () => Option.fromNullable(foregroundGroup(procFs, terminal.shellPid)))
      ),
    probe: (terminal) =>
      Effect.sync(() =>
        guarded(
          (cause): ProcessInspector.Probe => ({ _tag: "Miss", reason: `probe failed: ${String(cause)}` }),
          () => inspect(procFs, arch, terminal).probe
        )
      ),
    processTree: (rootPid) =>
      Effect.sync(() => guarded(() => [], () => descendants(processTable(procFs), rootPid).map(toProcessInfo))),
    cwd: (pid) =>
      Effect.sync(() => guarded(() => Option.none(), () => Option.some(fs.readlinkSync(`/proc/${pid}/cwd`)))),
    release: (terminal) => Effect.sync(() => procFs.unpin?.(terminal.shellPid)),
    terminalModes: (terminal) => terminalModes(terminal.ttyPath),
    activity: (terminal) =>
      Effect.sync(() =>
        guarded(() => Option.none(), () => {
          const pgid = foregroundGroup(procFs, terminal.shellPid)
          return Option.fromNullable(
            pgid === undefined ? undefined : foregroundActivity(procFs, arch, terminal.shellPid, pgid)
          )
        })
      ),
    listening: (rootPid) => Effect.sync(() => guarded(() => [], () => listening(procFs, rootPid)))
  })
}
