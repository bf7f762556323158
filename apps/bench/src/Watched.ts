/**
 * A command run in a session while the same process watches it: the rate at the watcher (write → the last
 * byte there), what reached it, and how often it was dropped. Used in-process and by the daemon group's
 * forked client, so both sides are measured the same way.
 */
import type { Ids, PtyService } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

const MiB = 2 ** 20

/** What reached the watcher. */
export interface Watched {
  /** MiB/s from the write to the last byte at the watcher. */
  readonly rate: number
  readonly bytes: number
  readonly dropped: number
}

/** `command` in session `id`, watched here until its output stops arriving. */
export const watchedSend = (
  pty: PtyService.PtyService["Type"],
  owner: Ids.OwnerId,
  id: Ids.SessionId,
  command: string
): Effect.Effect<Watched, unknown> =>
  Effect.scoped(Effect.gen(function*() {
    // the backlog bound raised for the measurement: what is measured is how fast the output reaches the
    // watcher, not where the bound cuts it
    const watch = yield* pty.watch!(owner, id, { maxBufferedBytes: 256 * MiB })
    let bytes = 0
    let last = 0
    let dropped = 0
    yield* watch.events.pipe(
      Stream.runForEach((event) =>
        Effect.sync(() => {
          if (event._tag === "Dropped") dropped++
          if (event._tag !== "Output") return
          bytes += event.data.length
          last = performance.now()
        })
      ),
      Effect.forkScoped
    )
    const started = performance.now()
    yield* pty.send(owner, id, { text: command, timeoutMs: 600_000 })
    let seen = -1
    while (seen !== bytes) {
      seen = bytes
      yield* Effect.sleep(150)
    }
    return { rate: bytes / MiB / ((last - started) / 1000), bytes, dropped }
  }))
