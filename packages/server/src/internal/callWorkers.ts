/**
 * The fibers that run a connection's tool calls. Each worker runs one call at a time and then waits, parked,
 * for the next, instead of a fiber made for each call: measured over stdio, a fiber per call cost ~13 µs more a
 * `terminal_send` (5 % of the server's CPU a send: its start and end, the runtime's fiber metrics, and its stack
 * promoted by the GC across the wait for the prompt; docs/performance.md). Calls in flight at once each have a
 * worker; at most `maxIdle` wait between calls, the others end.
 *
 * A call is interrupted (`notifications/cancelled`, the connection's end) by interrupting its worker, which
 * then ends with it: a worker never carries an interruption into its next call.
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"

/** The workers of one connection. */
export interface CallWorkers {
  /** Run `call` under `key` (the key of its request's id): it answers by itself, when it ends. */
  readonly run: (key: string, call: Effect.Effect<void>) => void
  /** Interrupt the call running under `key`, if one is (it answers nothing): whether one was. */
  readonly interrupt: (key: string) => boolean
  /** Interrupt every worker, running or waiting, and wait for them to end. */
  readonly interruptAll: Effect.Effect<void>
}

interface Worker {
  /** The key of the call it runs, when it runs one. */
  key: string | undefined
  /** Hands it its next call, while it waits. */
  resume: ((call: Effect.Effect<boolean>) => void) | undefined
  fiber: Fiber.RuntimeFiber<void> | undefined
}

/** The workers, their fibers made by `runFork` (the connection's runtime). */
export const make = (
  runFork: (effect: Effect.Effect<void>) => Fiber.RuntimeFiber<void>,
  maxIdle = 8
): CallWorkers => {
  const workers = new Set<Worker>()
  const idle: Array<Worker> = []
  const running = new Map<string, Worker>()

  /** After a call: whether the worker waits for another (false: enough wait already, it ends). */
  const done = (worker: Worker, key: string) => {
    if (running.get(key) === worker) running.delete(key)
    worker.key = undefined
    return idle.length < maxIdle
  }

  /** The call, then `done`. */
  const job = (worker: Worker, key: string, call: Effect.Effect<void>) => Effect.map(call, () => done(worker, key))

  const start = (key: string, call: Effect.Effect<void>) => {
    const worker: Worker = { key, resume: undefined, fiber: undefined }
    // it waits idle only while it can be handed a call (`resume` set), and runs what it is handed
    const next = Effect.async<boolean>((resume) => {
      worker.resume = resume
      idle.push(worker)
    })
    const loop = (again: boolean): Effect.Effect<void> => again ? Effect.flatMap(next, loop) : Effect.void
    workers.add(worker)
    running.set(key, worker)
    const fiber = runFork(Effect.flatMap(job(worker, key, call), loop))
    worker.fiber = fiber
    // called at once if the fiber already ended
    fiber.addObserver(() => {
      workers.delete(worker)
      const waiting = idle.indexOf(worker)
      if (waiting !== -1) idle.splice(waiting, 1)
      if (worker.key !== undefined && running.get(worker.key) === worker) running.delete(worker.key)
    })
  }

  return {
    run: (key, call) => {
      const worker = idle.pop()
      if (worker === undefined) return start(key, call)
      const resume = worker.resume!
      worker.resume = undefined
      worker.key = key
      running.set(key, worker)
      resume(job(worker, key, call))
    },
    interrupt: (key) => {
      const fiber = running.get(key)?.fiber
      if (fiber === undefined) return false
      fiber.unsafeInterruptAsFork(FiberId.none)
      return true
    },
    interruptAll: Effect.suspend(() =>
      Fiber.interruptAll(Array.from(workers, (worker) => worker.fiber).filter((fiber) => fiber !== undefined))
    )
  }
}
