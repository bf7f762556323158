/**
 * The `exec` and `process` tools over the `Exec` service: the model's parameters checked and mapped to
 * the service's requests (a command string is never split, argv is never joined), the results tagged by
 * action.
 */
import { Errors, Exec, type Ids, type Session } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { ProcessResult } from "../TerminalTools.js"

/** The parameters of the `exec` tool, as validated by its schema. */
export interface ExecParams {
  readonly command?: string | undefined
  readonly argv?: ReadonlyArray<string> | undefined
  readonly mode?: Exec.Mode | undefined
  readonly cwd?: string | undefined
  readonly timeoutMs?: number | undefined
  readonly noOutputTimeoutMs?: number | undefined
  readonly yieldMs?: number | undefined
  readonly background?: boolean | undefined
  readonly waitFor?: Session.WaitFor | undefined
}

/** The parameters of the `process` tool, as validated by its schema. */
export interface ProcessParams {
  readonly action: "list" | "poll" | "log" | "write" | "keys" | "paste" | "submit" | "kill" | "remove"
  readonly taskId?: string | undefined
  readonly wait?: boolean | undefined
  readonly timeoutMs?: number | undefined
  readonly offset?: number | undefined
  readonly count?: number | undefined
  readonly text?: string | undefined
  readonly keys?: ReadonlyArray<string> | undefined
  readonly eof?: boolean | undefined
}

type Service = Exec.Exec["Type"]

const unavailable = Effect.fail(
  new Errors.InvalidInput({
    field: "tool",
    reason: "one-shot runs are not available in this runtime (no Exec service): use terminal_open and terminal_send"
  })
)

const invalid = (field: string, reason: string) => Effect.fail(new Errors.InvalidInput({ field, reason }))

/** The service's request for the tool's parameters. */
export const execRequest = (
  params: ExecParams,
  shell: string
): Effect.Effect<Exec.ExecRequest, Errors.InvalidInput> => {
  if (params.command !== undefined && params.argv !== undefined) {
    return invalid("command", "give command or argv, not both")
  }
  if (params.command === undefined && params.argv === undefined) {
    return invalid("command", "give command (a shell command line) or argv (a program and its arguments)")
  }
  const mode = params.mode ?? (params.command !== undefined ? "pty" : "child")
  let spawn: Exec.Spawn
  if (params.argv !== undefined) {
    const [program, ...args] = params.argv
    if (program === undefined || program === "") return invalid("argv", "needs the program (argv[0])")
    if (mode === "pty") {
      return invalid(
        "mode",
        "pty mode runs a command line with the shell: give command instead of argv (or use mode \"child\")"
      )
    }
    spawn = { _tag: "child", argv: [program, ...args] }
  } else {
    const command = params.command!
    if (command.trim() === "") return invalid("command", "is empty")
    spawn = mode === "pty" ? { _tag: "pty", command } : { _tag: "child", argv: Exec.shellArgv(shell, command) }
  }
  return Effect.succeed({
    spawn,
    ...(params.cwd !== undefined ? { cwd: params.cwd } : {}),
    ...(params.timeoutMs !== undefined ? { timeoutMs: params.timeoutMs } : {}),
    ...(params.noOutputTimeoutMs !== undefined ? { noOutputTimeoutMs: params.noOutputTimeoutMs } : {}),
    ...(params.yieldMs !== undefined ? { yieldMs: params.yieldMs } : {}),
    ...(params.background !== undefined ? { background: params.background } : {}),
    ...(params.waitFor !== undefined ? { waitFor: params.waitFor } : {})
  })
}

/** `exec`. */
export const exec = (
  service: Option.Option<Service>,
  owner: Ids.OwnerId,
  params: ExecParams
): Effect.Effect<Exec.ExecResult, Errors.TerminalError> =>
  Option.match(service, {
    onNone: () => unavailable,
    onSome: (exec): Effect.Effect<Exec.ExecResult, Errors.TerminalError> =>
      Effect.flatMap(execRequest(params, exec.shell), (request) => exec.exec(owner, request))
  })

const inputOf = (params: ProcessParams): Effect.Effect<Exec.ExecInput, Errors.InvalidInput> => {
  const eof = params.eof === true ? { eof: true } : {}
  switch (params.action) {
    case "write":
      if (params.text === undefined && params.eof !== true) return invalid("text", "is required for write")
      return Effect.succeed({ ...(params.text !== undefined ? { text: params.text } : {}), ...eof })
    case "submit":
      return Effect.succeed({ ...(params.text !== undefined ? { text: params.text } : {}), submit: true, ...eof })
    case "paste":
      if (params.text === undefined) return invalid("text", "is required for paste")
      return Effect.succeed({ paste: params.text, ...eof })
    default:
      if (params.keys === undefined || params.keys.length === 0) return invalid("keys", "is required for keys")
      return Effect.succeed({ keys: params.keys, ...eof })
  }
}

/** `process`. */
export const process = (
  service: Option.Option<Service>,
  owner: Ids.OwnerId,
  params: ProcessParams
): Effect.Effect<typeof ProcessResult.Type, Errors.TerminalError> =>
  Option.match(service, {
    onNone: () => unavailable,
    onSome: (exec): Effect.Effect<typeof ProcessResult.Type, Errors.TerminalError> => {
      if (params.action === "list") {
        return Effect.map(exec.list(owner), (tasks) => ({ action: "list" as const, tasks }))
      }
      const taskId = params.taskId
      if (taskId === undefined || taskId === "") return invalid("taskId", `is required for ${params.action}`)
      switch (params.action) {
        case "poll":
          return Effect.map(
            exec.poll(owner, taskId, { wait: params.wait, timeoutMs: params.timeoutMs }),
            (view) => ({ action: "poll" as const, ...view })
          )
        case "kill":
          return Effect.map(exec.kill(owner, taskId), (view) => ({ action: "kill" as const, ...view }))
        case "log":
          return Effect.map(
            exec.log(owner, taskId, { offset: params.offset, count: params.count }),
            (page) => ({ action: "log" as const, ...page })
          )
        case "remove":
          return Effect.map(exec.remove(owner, taskId), (result) => ({ action: "remove" as const, ...result }))
        default: {
          const action = params.action
          return inputOf(params).pipe(
            Effect.flatMap((input) => exec.write(owner, taskId, input)),
            Effect.map((result) => ({ action, ...result }))
          )
        }
      }
    }
  })
