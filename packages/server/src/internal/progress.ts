/**
 * Progress notifications while a tool call waits (a long send, `task_output` or `process poll` with `wait`,
 * `steps`, a foreground `exec`, `terminal_request_human`): when the request carries `_meta.progressToken`,
 * the transport sends `notifications/progress` every `intervalMs` (5 s by default) and, at most once a
 * second, when the terminal the call waits on printed new lines. A client that resets its request timeout
 * on progress (the TypeScript SDK's `resetTimeoutOnProgress`) then keeps a healthy 90 s build alive
 * through its 60 s timeout. The message is short: the time waited, the lines printed meanwhile, and what
 * the terminal's foreground program is doing when this process can tell (`waiting, 15 s; 120 new lines of
 * output; foreground: make (pid 42) waiting child: wait4`).
 */
import type { Ids } from "@agent-terminal/core"
import { ProcessInspector, PtyService, Session } from "@agent-terminal/core"
import { CallProgress as ToolsProgress } from "@agent-terminal/tools"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as JsonRpc from "./jsonRpc.js"

const { CallProgress, defaultIntervalMs } = ToolsProgress
type CallProgress = ToolsProgress.CallProgress

const seconds = (ms: number) => `${Math.round(ms / 1000)} s`

/**
 * Run `call` with progress notifications for `token` sent through `emit`, every `intervalMs` and on new
 * lines of the terminal the call waits on; they stop when the call ends (before its answer is sent).
 */
export const reporting = <A, E, R>(
  call: Effect.Effect<A, E, R>,
  options: {
    readonly token: string | number
    readonly owner: Ids.OwnerId
    readonly emit: (notification: object) => void
    readonly intervalMs?: number | undefined
  }
): Effect.Effect<A, E, Exclude<R, CallProgress>> =>
  Effect.gen(function*() {
    const terminals = yield* Effect.serviceOption(PtyService.PtyService)
    const intervalMs = Math.max(1, options.intervalMs ?? defaultIntervalMs)
    const tickMs = Math.min(1000, intervalMs)
    const clock = yield* Effect.clock
    const started = clock.unsafeCurrentTimeMillis()
    let watched: { readonly id: Ids.SessionId; readonly baseline: number; lines: number } | undefined
    let count = 0
    let lastAt = started
    let lastLines = 0

    const inspector = yield* Effect.serviceOption(ProcessInspector.ProcessInspector)
    /** The lines the terminal has shown so far (the end of its transcript, counted from its first line). */
    const totalLines = (id: Ids.SessionId) =>
      Option.isNone(terminals) ? Effect.succeed(undefined) : terminals.value.read(options.owner, id, { count: 1 }).pipe(
        Effect.map((page): number | undefined => page.lineEnd),
        Effect.orElseSucceed(() => undefined)
      )
    let shellPid: number | undefined
    /**
     * What the terminal's foreground program is doing, where this process can look (`/proc` of its own
     * terminals: not through the daemon, whose inspector is its own).
     */
    const foreground = Effect.gen(function*() {
      const activity = Option.isSome(inspector) ? inspector.value.activity : undefined
      if (activity === undefined || Option.isNone(terminals) || watched === undefined) return undefined
      if (shellPid === undefined) {
        const id = watched.id
        shellPid = (yield* terminals.value.list(options.owner)).find((session) => session.sessionId === id)?.pid
      }
      if (shellPid === undefined) return undefined
      const found = yield* activity({ shellPid, ttyPath: undefined })
      return Option.getOrUndefined(found)
    })

    const progress = CallProgress.of({
      waitsOn: (id) =>
        Effect.map(totalLines(id), (lines) => {
          if (lines !== undefined) watched = { id, baseline: lines, lines }
        })
    })

    const emit = (now: number) =>
      Effect.map(foreground, (activity) => {
        count++
        lastAt = now
        const lines = watched === undefined ? undefined : Math.max(0, watched.lines - watched.baseline)
        if (lines !== undefined) lastLines = lines
        const parts = [`waiting, ${seconds(now - started)}`]
        if (lines !== undefined) parts.push(`${lines} new line${lines === 1 ? "" : "s"} of output`)
        if (activity !== undefined) parts.push(`foreground: ${Session.activityText(activity)}`)
        options.emit(JsonRpc.notification("notifications/progress", {
          progressToken: options.token,
          progress: count,
          message: parts.join("; ")
        }))
      })

    const tick = Effect.gen(function*() {
      if (watched !== undefined) {
        const lines = yield* totalLines(watched.id)
        if (lines !== undefined) watched.lines = lines
      }
      const now = clock.unsafeCurrentTimeMillis()
      const newLines = watched !== undefined && watched.lines - watched.baseline !== lastLines
      if (now - lastAt >= intervalMs || (newLines && now - lastAt >= tickMs)) yield* emit(now)
    })

    const reporter = tick.pipe(Effect.delay(tickMs), Effect.forever)
    return yield* Effect.raceFirst(
      Effect.provideService(call, CallProgress, progress),
      Effect.zipRight(reporter, Effect.never)
    )
  }) as Effect.Effect<A, E, Exclude<R, CallProgress>>
