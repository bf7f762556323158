import { Exec } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { owner } from "../support/terminal.js"

export { failureOf } from "../support/terminal.js"

/** A `sleep` argument no other test uses, so its processes can be found on the host. */
export const uniqueSleep = (): string => `97.${Math.floor(Math.random() * 1e9)}`

/** Pids whose command line is `sleep <seconds>` (zombies count as gone). */
export const sleepers = (seconds: string): Array<number> =>
  fs.readdirSync("/proc").flatMap((name) => {
    const pid = Number(name)
    if (!Number.isInteger(pid)) return []
    try {
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "latin1")
      if (cmdline !== `sleep\0${seconds}\0`) return []
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
      return state === "Z" || state === "X" ? [] : [pid]
    } catch {
      return []
    }
  })

/** A run for the test owner; whatever it leaves is removed when the test's scope ends. */
export const run = (request: Exec.ExecRequest, who = owner) =>
  Effect.gen(function*() {
    const exec = yield* Exec.Exec
    const result = yield* exec.exec(who, request)
    if (result.taskId !== undefined) {
      const taskId = result.taskId
      yield* Effect.addFinalizer(() => exec.remove(who, taskId).pipe(Effect.ignore))
    }
    return result
  })

/** A bash script run in child mode (argv, no quoting) or pty mode (the same script as the command line). */
export const script = (mode: Exec.Mode, text: string): Exec.Spawn =>
  mode === "child" ? { _tag: "child", argv: ["bash", "-c", text] } : { _tag: "pty", command: text }
