/**
 * The node-pty backend: each session's program runs on its own pseudo-terminal, inside its own cgroup
 * where cgroup v2 is writable (otherwise tracked for the identity-fenced sweep). Output flows as raw
 * bytes into a mailbox with flow control; closing the scope tears the whole tree down.
 *
 * @since 0.1.0
 */
import { Errors, PtyBackend } from "@agent-terminal/core"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as pty from "node-pty"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Signals from "./Signals.js"
import * as Teardown from "./Teardown.js"

/** Chunks queued (each at most one pty read, ≤ 64 KiB) before reading from the pty pauses. */
const HIGH_WATER = 16
const LOW_WATER = 2
/** How long to wait for node-pty's exit event after the tree was killed (it can fail to arrive). */
const EXIT_GRACE_MS = 1000

const checkCwd = (cwd: string) =>
  Effect.try({
    try: () => fs.statSync(cwd),
    catch: () => new Errors.InvalidInput({ field: "cwd", reason: `${cwd} does not exist` })
  }).pipe(
    Effect.filterOrFail(
      (stat) => stat.isDirectory(),
      () => new Errors.InvalidInput({ field: "cwd", reason: `${cwd} is not a directory` })
    )
  )

const signalName = (signal: number | undefined): string | null => {
  if (signal === undefined || signal === 0) return null
  const entry = Object.entries(os.constants.signals).find(([, value]) => value === signal)
  return entry?.[0] ?? `signal ${signal}`
}

/**
 * Spawn a program on a new pty. The program joins its containment (cgroup) before it execs.
 *
 * @since 0.1.0
 */
export const spawn = (request: PtyBackend.SpawnRequest) =>
  Effect.gen(function*() {
    yield* checkCwd(request.cwd)
    const container = yield* Teardown.contain(request.label, { graceMs: request.disposeGraceMs })
    const argv = container.wrap(request.file, request.args)
    const output = yield* Mailbox.make<Uint8Array>()
    const exited = yield* Deferred.make<PtyBackend.ExitStatus>()
    const terminal = yield* Effect.try({
      try: () =>
        pty.spawn(argv.file, [...argv.args], {
          name: request.env.TERM ?? "xterm-256color",
          cols: request.cols,
          rows: request.rows,
          cwd: request.cwd,
          env: { ...request.env },
          encoding: null
        }),
      catch: (error) => new Errors.SpawnFailed({ command: request.file, reason: String(error) })
    })
    let paused = false
    const drainCheck = () => {
      if (!paused) return
      const size = Option.getOrElse(output.unsafeSize(), () => 0)
      if (size < LOW_WATER) {
        paused = false
        terminal.resume()
      } else {
        setImmediate(drainCheck)
      }
    }
    const onData = terminal.onData((data: string | Buffer) => {
      output.unsafeOffer(typeof data === "string" ? Buffer.from(data, "utf8") : data)
      if (!paused && Option.getOrElse(output.unsafeSize(), () => 0) > HIGH_WATER) {
        paused = true
        terminal.pause()
        setImmediate(drainCheck)
      }
    })
    const onExit = terminal.onExit(({ exitCode, signal }) => {
      Deferred.unsafeDone(exited, Effect.succeed({ exitCode: signal ? null : exitCode, signal: signalName(signal) }))
      output.unsafeDone(Exit.void)
    })
    const pid = terminal.pid
    const tracked = yield* container.track(pid)
    const ttyPath = (terminal as unknown as { _pty?: string })._pty

    const finishExit = Effect.suspend(() =>
      Deferred.isDone(exited).pipe(
        Effect.flatMap((done) =>
          done ? Effect.void : Deferred.await(exited).pipe(
            Effect.timeout(EXIT_GRACE_MS),
            Effect.catchAll(() =>
              Effect.sync(() => {
                Deferred.unsafeDone(exited, Effect.succeed({ exitCode: null, signal: "SIGKILL" }))
                output.unsafeDone(Exit.void)
              })
            )
          )
        )
      )
    )

    const terminate = tracked.terminate.pipe(
      Effect.tap((report) => report.survivors.length === 0 ? finishExit : Effect.void),
      Effect.flatMap((report) =>
        report.survivors.length === 0
          ? Effect.succeed(report)
          : Effect.fail(new Errors.CleanupFailed({ sessionId: request.label, survivors: [...report.survivors] }))
      )
    )

    yield* Effect.addFinalizer(() =>
      terminate.pipe(
        Effect.catchAll((error) => Effect.logWarning("teardown left survivors", error.survivors)),
        Effect.ensuring(Effect.sync(() => {
          onData.dispose()
          onExit.dispose()
          try {
            terminal.kill("SIGKILL")
          } catch {
            // already gone
          }
        }))
      )
    )

    return {
      pid,
      ttyPath,
      containment: container.kind,
      output,
      exited,
      write: (data: string | Uint8Array) =>
        Effect.sync(() => {
          try {
            terminal.write(typeof data === "string" ? data : Buffer.from(data))
          } catch {
            // the pty is gone: the exit tier reports it
          }
        }),
      resize: (cols: number, rows: number) =>
        Effect.sync(() => {
          try {
            terminal.resize(cols, rows)
          } catch {
            // the pty is gone
          }
        }),
      pause: Effect.sync(() => terminal.pause()),
      resume: Effect.sync(() => terminal.resume()),
      signalGroup: (pgid: number, signal: NodeJS.Signals) => Signals.signalGroup(pgid, signal),
      terminate
    } satisfies PtyBackend.PtyProcess
  })

/**
 * The node-pty backend layer.
 *
 * @since 0.1.0
 */
export const layer: Layer.Layer<PtyBackend.PtyBackend> = Layer.effect(
  PtyBackend.PtyBackend,
  Effect.map(
    Effect.context<Teardown.Cgroups | Teardown.HostExit>(),
    (context) => PtyBackend.PtyBackend.of({ spawn: (request) => Effect.provide(spawn(request), context) })
  )
).pipe(Layer.provide(Teardown.layer))
