import type { Emulator } from "@agent-terminal/terminal"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Mailbox from "effect/Mailbox"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { ExitStatus } from "../../PtyBackend.js"
import type { Cast } from "../../Recording.js"
import type { SessionStatus } from "../../Session.js"
import type { Watch, WatchEvent, WatchOptions } from "../../Watch.js"
import { defaultMaxBufferedBytes } from "../../Watch.js"

interface Watcher {
  readonly mailbox: Mailbox.Mailbox<WatchEvent>
  readonly limit: number
  /** Bytes of output offered and not yet taken. */
  buffered: number
}

const sizeOf = (event: WatchEvent): number => event._tag === "Output" ? event.data.length : 0

/**
 * A session's watchers. Fed synchronously where the session's reader parses output (so a watcher's
 * snapshot, taken between two parses, is continued exactly by the chunks it gets), never waiting for one.
 */
export class Watchers {
  readonly #watchers = new Set<Watcher>()
  /** The session's recording, fed in the same order (absent: not recorded). */
  recording: Cast | undefined = undefined

  /** A piece of output, as parsed. */
  output(data: Uint8Array): void {
    this.recording?.output(data)
    if (this.#watchers.size === 0) return
    for (const watcher of this.#watchers) {
      if (watcher.buffered + data.length > watcher.limit) {
        watcher.mailbox.unsafeOffer({
          _tag: "Dropped",
          reason: `the watcher fell more than ${watcher.limit} bytes behind the terminal's output`,
          bufferedBytes: watcher.buffered
        })
        this.#end(watcher)
        continue
      }
      watcher.buffered += data.length
      watcher.mailbox.unsafeOffer({ _tag: "Output", data })
    }
  }

  /** The terminal was resized (between two parses: the output after it is laid out at the new size). */
  resized(cols: number, rows: number): void {
    this.recording?.resize(cols, rows)
    for (const watcher of this.#watchers) watcher.mailbox.unsafeOffer({ _tag: "Resized", cols, rows })
  }

  /** The program exited and all its output was parsed. */
  exited(status: ExitStatus): void {
    for (const watcher of this.#watchers) {
      watcher.mailbox.unsafeOffer({ _tag: "Exited", exitCode: status.exitCode, signal: status.signal })
      this.#end(watcher)
    }
  }

  /** The session is closing: every watch ends. */
  end(): void {
    for (const watcher of this.#watchers) this.#end(watcher)
  }

  #end(watcher: Watcher): void {
    this.#watchers.delete(watcher)
    watcher.mailbox.unsafeDone(Exit.void)
  }

  /**
   * A new watch of the session: the watcher is registered and the snapshot taken in one synchronous step.
   * It is removed when the scope closes.
   */
  watch(
    session: { readonly emulator: Emulator.Emulator; readonly exit: ExitStatus | undefined },
    status: () => SessionStatus,
    options: WatchOptions = {}
  ): Effect.Effect<Watch, never, Scope.Scope> {
    return Effect.gen(this, function*() {
      const mailbox = yield* Mailbox.make<WatchEvent>()
      const watcher: Watcher = { mailbox, limit: options.maxBufferedBytes ?? defaultMaxBufferedBytes, buffered: 0 }
      const snapshot = yield* Effect.acquireRelease(
        Effect.sync(() => {
          const { cols, data, pending, rows } = session.emulator.snapshot()
          if (session.exit === undefined) this.#watchers.add(watcher)
          else {
            mailbox.unsafeOffer({ _tag: "Exited", exitCode: session.exit.exitCode, signal: session.exit.signal })
            mailbox.unsafeDone(Exit.void)
          }
          return { _tag: "Snapshot" as const, cols, rows, data, pending, status: status() }
        }),
        () => Effect.sync(() => this.#end(watcher))
      )
      // taken a chunk at a time (what waited together), the backlog counted down without an effect per event
      const events = Mailbox.toStream(mailbox).pipe(
        Stream.mapChunks((chunk) => {
          for (const event of chunk) watcher.buffered -= sizeOf(event)
          return chunk
        })
      )
      return { snapshot, events }
    })
  }
}
