/**
 * The node-pty backend: each session's program runs on its own pseudo-terminal, inside its own cgroup
 * where cgroup v2 is writable (otherwise tracked for the identity-fenced sweep). Output flows as raw
 * bytes into a mailbox with flow control; closing the scope tears the whole tree down.
 *
 * @since 0.1.0
 */
import { Errors, PtyBackend } from "@agent-terminal/core"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as pty from "node-pty"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Descriptors from "./internal/pty/descriptors.js"
import { findProgram } from "./internal/pty/executable.js"
import { discardPendingInput, makePtyWriter, readOutputNow, readToTheEnd } from "./internal/pty/writer.js"
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

/**
 * The program must exist before it is wrapped (in the cgroup join, the sandbox): afterwards a missing
 * program is only an exit status 127 of the wrapper, not the clear `SpawnFailed` a caller needs.
 */
const checkProgram = (request: PtyBackend.SpawnRequest) =>
  Effect.suspend(() => {
    const { file } = request
    return findProgram(file, request.env.PATH ?? "", request.cwd) !== undefined
      ? Effect.void
      : Effect.fail(
        new Errors.SpawnFailed({
          command: file,
          reason: file.includes("/") ? "no such executable file" : "not found in PATH"
        })
      )
  })

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
    yield* Descriptors.checkHeadroom
    yield* checkCwd(request.cwd)
    yield* checkProgram(request)
    const container = yield* Teardown.contain(request.label, {
      graceMs: request.disposeGraceMs,
      limits: request.limits
    })
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
          env: { ...request.env, ...container.env },
          encoding: null
        }),
      catch: (error) => new Errors.SpawnFailed({ command: request.file, reason: String(error) })
    })
    let paused = false
    // Polls only while paused; stops for good once the session is torn down (its reader no longer drains the
    // mailbox, which would otherwise keep this loop, and the event loop, spinning forever).
    let stopped = false
    const drainCheck = () => {
      if (!paused || stopped) return
      const size = Option.getOrElse(output.unsafeSize(), () => 0)
      if (size < LOW_WATER) {
        paused = false
        terminal.resume()
      } else {
        setImmediate(drainCheck)
      }
    }
    let sink: ((chunk: Uint8Array) => boolean) | undefined
    const deliver = (chunk: Uint8Array) => {
      if (sink !== undefined && sink(chunk)) return
      output.unsafeOffer(chunk)
      if (!paused && Option.getOrElse(output.unsafeSize(), () => 0) > HIGH_WATER) {
        paused = true
        terminal.pause()
        setImmediate(drainCheck)
      }
    }
    const onData = terminal.onData((data: string | Buffer) => {
      deliver(typeof data === "string" ? Buffer.from(data, "utf8") : data)
    })
    const onExit = terminal.onExit(({ exitCode, signal }) => {
      Deferred.unsafeDone(exited, Effect.succeed({ exitCode: signal ? null : exitCode, signal: signalName(signal) }))
      output.unsafeDone(Exit.void)
    })
    const pid = terminal.pid
    const rootStart = yield* Teardown.startTimeOf(pid)
    const tracked = yield* container.track(pid)
    yield* Effect.logDebug("session contained").pipe(
      Effect.annotateLogs({
        session: request.label,
        pid,
        containment: container.kind,
        ...Option.match(container.cgroup, { onNone: () => ({}), onSome: (cgroup) => ({ cgroup: cgroup.path }) })
      })
    )
    const internals = terminal as unknown as {
      readonly _pty?: string
      readonly _fd?: number
      readonly _socket?: {
        readonly destroyed: boolean
        readonly readableLength: number
        readonly destroy: () => void
        push: (chunk: Buffer | null) => boolean
      }
    }
    const ttyPath = internals._pty
    const socket = internals._socket
    const isOpen = () => socket !== undefined && !socket.destroyed
    const fd = internals._fd
    if (socket !== undefined && typeof fd === "number") readToTheEnd(socket, fd)
    const writer = typeof fd === "number" ? makePtyWriter(fd, isOpen) : undefined
    // Only while node's own reading is neither paused nor holding bytes it has not emitted yet: what is read
    // here is then exactly the next output, and goes the same way as node-pty's.
    const flushOutput = typeof fd === "number"
      ? Effect.sync(() => !paused && isOpen() && socket!.readableLength === 0 && readOutputNow(fd, deliver))
      : undefined

    // The tree is dead. Whatever still holds the pty slave (a daemon that escaped the sweep, a process
    // outside the tree) would hold node-pty's exit event back until its socket times out: close our end now,
    // the output left is of no interest to a closing session.
    const finishExit = Effect.suspend(() =>
      Deferred.isDone(exited).pipe(
        Effect.flatMap((done) =>
          done ? Effect.void : Effect.sync(() => {
            if (isOpen()) socket!.destroy()
          }).pipe(
            // Interruptible, or the timeout could not end the wait inside a finalizer.
            Effect.zipRight(Effect.interruptible(Deferred.await(exited))),
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

    let finished: PtyBackend.TeardownReport | undefined
    const terminate = Effect.suspend(() =>
      finished !== undefined ? Effect.succeed(finished) : tracked.terminate.pipe(
        Effect.flatMap((report) =>
          report.survivors.length === 0
            ? Effect.zipRight(finishExit, Effect.sync(() => (finished = report)))
            : Effect.fail(new Errors.CleanupFailed({ sessionId: request.label, survivors: [...report.survivors] }))
        )
      )
    )

    yield* Effect.addFinalizer(() =>
      terminate.pipe(
        Effect.catchAll((error) => Effect.logWarning("teardown left survivors", error.survivors)),
        Effect.ensuring(Effect.sync(() => {
          writer?.close()
          sink = undefined
          stopped = true
          onData.dispose()
          onExit.dispose()
          // node-pty's own kill/destroy signal the pid blindly, which may be another process's by now
          if (Option.isSome(rootStart)) Teardown.killIfSame(pid, rootStart.value)
        }))
      )
    )

    return {
      pid,
      ttyPath,
      containment: container.kind,
      ...(container.limits !== undefined ? { limits: container.limits } : {}),
      output,
      ...(flushOutput !== undefined ? { flushOutput } : {}),
      attachSink: (next) => {
        sink = next
      },
      exited: Deferred.await(exited),
      write: (data: string | Uint8Array) =>
        writer !== undefined
          ? writer.write(typeof data === "string" ? Buffer.from(data, "utf8") : data)
          : Effect.sync(() => {
            try {
              terminal.write(typeof data === "string" ? data : Buffer.from(data))
            } catch {
              // the pty is gone: the exit tier reports it
            }
          }),
      discardInput: Effect.sync(() => ttyPath !== undefined && isOpen() ? discardPendingInput(ttyPath) : 0),
      resize: (cols: number, rows: number) =>
        Effect.sync(() => {
          if (!isOpen()) return
          try {
            terminal.resize(cols, rows)
          } catch {
            // the pty is gone
          }
        }),
      pause: Effect.sync(() => terminal.pause()),
      resume: Effect.sync(() => terminal.resume()),
      signalGroup: (pgid: number, signal: PtyBackend.Signal) => Signals.signalGroup(pgid, signal),
      terminate
    } satisfies PtyBackend.PtyProcess
  })

/**
 * The node-pty backend over whatever containment services are provided.
 *
 * @since 0.1.0
 */
export const layerWithoutTeardown: Layer.Layer<PtyBackend.PtyBackend, never, Teardown.Cgroups | Teardown.HostExit> =
  Layer.effect(
    PtyBackend.PtyBackend,
    Effect.gen(function*() {
      // Only these two services: the layer's whole context would also carry the layer's own Scope, and
      // every session's cgroup, host-exit tracking and finalizer would then live as long as the layer.
      const context = Context.make(Teardown.Cgroups, yield* Teardown.Cgroups).pipe(
        Context.add(Teardown.HostExit, yield* Teardown.HostExit)
      )
      return PtyBackend.PtyBackend.of({ spawn: (request) => Effect.provide(spawn(request), context) })
    })
  )

/**
 * The node-pty backend layer: a cgroup per session where cgroup v2 is writable, the sweep otherwise.
 *
 * @since 0.1.0
 */
export const layer: Layer.Layer<PtyBackend.PtyBackend> = layerWithoutTeardown.pipe(Layer.provide(Teardown.layer))

/**
 * The node-pty backend with the identity-fenced sweep only, never a cgroup (the fallback of hosts without a
 * writable cgroup v2, measured by the benchmarks on hosts that have one).
 *
 * @since 0.1.0
 */
export const layerSweep: Layer.Layer<PtyBackend.PtyBackend> = layerWithoutTeardown.pipe(
  Layer.provide(Layer.merge(Teardown.layerCgroupsDisabled, Teardown.layerHostExit))
)
