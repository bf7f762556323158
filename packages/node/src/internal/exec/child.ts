/**
 * Child mode: the program runs with pipes (`node:child_process`, no shell, no terminal) in its own
 * session and process group, inside its containment (its own cgroup where available, else the
 * identity-fenced sweep). stdout and stderr are decoded separately and interleaved, chunk by chunk, into
 * one transcript; stdin stays open for input until `eof`. `SHLVL` is 1 unless the environment sets it, so that a
 * `bash -c` run does not read the user's `~/.bashrc` as bash does for a remote shell (stdin a socket).
 */
import { Errors, type Exec, type PtyBackend } from "@agent-terminal/core"
import { Utf8 } from "@agent-terminal/terminal"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as Teardown from "../../Teardown.js"
import { findProgram } from "../pty/executable.js"
import { Activity } from "./deadline.js"
import type { Started } from "./process.js"
import { inputPayload, readPending, waitAtMost } from "./process.js"
import { TextTranscript } from "./text.js"

/** After the program exited, how long a descendant still holding its pipes may delay the end. */
const EXIT_DRAIN_MS = 200
/** After the tree was killed, how long the pipes may take to close. */
const KILL_DRAIN_MS = 1000

const signalName = (signal: NodeJS.Signals | null): string | null => signal ?? null

/** The options of one child-mode run. */
export interface ChildOptions {
  readonly argv: readonly [string, ...Array<string>]
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
  readonly label: string
  readonly graceMs: number
  readonly limits?: PtyBackend.ResourceLimits | undefined
  readonly budget: number
  readonly maxLines: number
  readonly maxBytes: number
}

/** Start `argv` on pipes inside its containment; closing the scope ends its tree. */
export const spawnChild = (
  options: ChildOptions
): Effect.Effect<
  Started,
  Errors.SpawnFailed | Errors.InvalidInput,
  Teardown.Cgroups | Teardown.HostExit | Scope.Scope
> =>
  Effect.gen(function*() {
    const [file, ...args] = options.argv
    const stat = yield* Effect.sync(() => {
      try {
        return fs.statSync(options.cwd)
      } catch {
        return undefined
      }
    })
    if (stat === undefined || !stat.isDirectory()) {
      return yield* new Errors.InvalidInput({ field: "cwd", reason: `${options.cwd} is not an existing directory` })
    }
    const program = findProgram(file, options.env.PATH ?? "/usr/local/bin:/usr/bin:/bin", options.cwd)
    if (program === undefined) {
      return yield* new Errors.SpawnFailed({
        command: file,
        reason: file.includes("/") ? "no such executable file" : "command not found on PATH"
      })
    }
    const container = yield* Teardown.contain(options.label, { graceMs: options.graceMs, limits: options.limits })
    // argv[0] stays as given (a multi-call binary dispatches on it); the check above only fails early and clearly
    const wrapped = container.wrap(file, args)
    const transcript = new TextTranscript({
      budget: options.budget,
      maxLines: options.maxLines,
      maxBytes: options.maxBytes
    })
    // the run's activity on the fiber's clock, read in the child's callbacks below
    const clock = yield* Effect.clock
    const activity = new Activity(clock.unsafeCurrentTimeMillis())
    const exited = yield* Deferred.make<PtyBackend.ExitStatus>()
    const closed = yield* Deferred.make<void>()

    const child = yield* Effect.async<ReturnType<typeof spawn>, Errors.SpawnFailed>((resume) => {
      let started: ReturnType<typeof spawn>
      try {
        started = spawn(wrapped.file, [...wrapped.args], {
          cwd: options.cwd,
          // Node gives a child's stdin as a socket: bash -c, seeing a socket on stdin at shell level 0, takes
          // itself for a remote shell and reads ~/.bashrc (a user's pyenv or nvm init: slow, noisy, writing).
          // A run is a shell's child, as from a terminal, unless its environment says otherwise.
          env: { SHLVL: "1", ...options.env, ...container.env },
          stdio: ["pipe", "pipe", "pipe"],
          detached: true
        })
      } catch (error) {
        resume(Effect.fail(new Errors.SpawnFailed({ command: file, reason: String(error) })))
        return
      }
      let settled = false
      const settle = (effect: Effect.Effect<ReturnType<typeof spawn>, Errors.SpawnFailed>) => {
        if (settled) return
        settled = true
        resume(effect)
      }
      started.once("spawn", () => settle(Effect.succeed(started)))
      started.once("error", (error) =>
        settle(Effect.fail(new Errors.SpawnFailed({ command: file, reason: error.message }))))
    })
    const pid = child.pid!
    child.on("error", () => {
      // a late error (a failed kill of an exited child): the exit and teardown paths report what matters
    })

    const decoders = { stdout: new TextDecoder("utf-8"), stderr: new TextDecoder("utf-8") }
    let frozen = false
    const onData = (decoder: InstanceType<typeof TextDecoder>) => (chunk: Buffer) => {
      if (frozen) {
        return
      }
      const text = decoder.decode(chunk, { stream: true })
      if (text !== "") {
        transcript.write(text)
      }
      activity.notify(clock.unsafeCurrentTimeMillis())
    }
    child.stdout!.on("data", onData(decoders.stdout))
    child.stderr!.on("data", onData(decoders.stderr))
    child.stdin!.on("error", () => {
      // the program closed its stdin (EPIPE): later writes fail with InvalidInput
    })
    child.once("exit", (code, signal) => {
      Deferred.unsafeDone(
        exited,
        Effect.succeed({ exitCode: signal !== null ? null : code, signal: signalName(signal) })
      )
    })
    child.once("close", () => {
      for (const decoder of [decoders.stdout, decoders.stderr]) {
        const rest = decoder.decode()
        if (rest !== "" && !frozen) {
          transcript.write(rest)
        }
      }
      Deferred.unsafeDone(closed, Effect.void)
      activity.notify(undefined)
    })
    const tracked = yield* container.track(pid)
    yield* Effect.addFinalizer(() =>
      tracked.terminate.pipe(
        Effect.zipRight(Deferred.await(closed).pipe(waitAtMost(KILL_DRAIN_MS))),
        Effect.ensuring(Effect.sync(() => {
          child.stdin?.destroy()
          child.stdout?.destroy()
          child.stderr?.destroy()
          child.removeAllListeners()
        }))
      )
    )

    const input = (request: Exec.ExecInput) =>
      Effect.suspend(() => {
        const payload = inputPayload(request)
        if (payload._tag === "invalid") {
          return Effect.fail(new Errors.InvalidInput({ field: "text", reason: payload.reason }))
        }
        if (payload._tag === "keys") {
          return Effect.fail(
            new Errors.InvalidInput({
              field: "keys",
              reason:
                "a child-mode run reads a pipe, not a terminal: send text (submit adds a newline, eof closes stdin); " +
                "for keys run it in pty mode"
            })
          )
        }
        const stdin = child.stdin
        if (stdin === null || stdin.destroyed || stdin.writableEnded) {
          return Effect.fail(new Errors.InvalidInput({ field: "taskId", reason: "the program's stdin is closed" }))
        }
        const text = (payload._tag === "none" ? "" : payload.text) + (request.submit === true ? "\n" : "")
        return Effect.sync(() => {
          if (text !== "") {
            stdin.write(text)
          }
          if (request.eof === true) {
            stdin.end()
          }
          activity.notify(clock.unsafeCurrentTimeMillis())
          return Utf8.byteLength(text)
        })
      })

    return {
      mode: "child",
      pid,
      transcript: {
        full: () =>
          transcript.full(),
        takeNew: () => transcript.takeNew(),
        page: (request) => transcript.page(request),
        watch: (target) => transcript.watch(target),
        dispose: () => {}
      },
      activity,
      ended: Deferred.await(exited).pipe(
        Effect.tap(() => Deferred.await(closed).pipe(waitAtMost(EXIT_DRAIN_MS)))
      ),
      drained: Deferred.await(closed).pipe(waitAtMost(KILL_DRAIN_MS)),
      input,
      freeze: readPending.pipe(Effect.zipRight(Effect.sync(() => {
        frozen = true
      }))),
      terminate: tracked.terminate,
      waitingForInput: () => false
    } satisfies Started
  })
