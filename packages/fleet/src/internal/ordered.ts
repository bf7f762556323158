/**
 * What a session received, handed to `@effect/rpc` in the order it came: each effect starts at once, on the
 * NATS callback's own stack, when nothing of its line is still running, and waits behind the one that is
 * otherwise (a chunk waiting for room in its reader's buffer, a request waiting for its id to be free). No
 * queue and no fiber waking up in between on the common path: the effect runs as the message is read, as
 * `@effect/platform`'s socket runs each read. A line that waits holds up only what is behind it in that line.
 */
import type * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"

interface Item {
  readonly effect: Effect.Effect<void>
  readonly done: (() => void) | undefined
}

/** Starts an effect's fiber (a `FiberSet`'s runtime, so the fibers end with its scope). */
export type Run = (effect: Effect.Effect<void>) => Fiber.RuntimeFiber<void, unknown>

/** One line of effects run one after another. */
export class Line {
  private waiting: Array<Item> = []
  private running: Fiber.RuntimeFiber<void, unknown> | undefined
  private draining = false

  /** `onIdle`: the line ran everything offered to it. */
  constructor(private readonly run: Run, private readonly onIdle?: () => void) {}

  /** Run `effect` after everything offered before it; `done` when it ended (or was dropped by `clear`). */
  offer(effect: Effect.Effect<void>, done?: () => void): void {
    this.waiting.push({ effect, done })
    if (!this.draining && this.running === undefined) this.drain()
  }

  /** Drop what waits (each `done` called) and interrupt what runs: the session is over. */
  clear(): void {
    const dropped = this.waiting
    this.waiting = []
    for (const item of dropped) item.done?.()
    this.running?.unsafeInterruptAsFork(FiberId.none)
  }

  private drain(): void {
    this.draining = true
    try {
      while (this.running === undefined && this.waiting.length > 0) {
        const item = this.waiting.shift()!
        const fiber = this.run(item.effect)
        if (fiber.unsafePoll() === null) {
          this.running = fiber
          fiber.addObserver(() => {
            this.running = undefined
            item.done?.()
            if (!this.draining) this.drain()
          })
        } else {
          item.done?.()
        }
      }
    } finally {
      this.draining = false
    }
    if (this.running === undefined && this.waiting.length === 0) this.onIdle?.()
  }
}
