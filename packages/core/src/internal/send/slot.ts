/**
 * A session's send slot: one send at a time. A foreground send holds it in its caller's fiber
 * (`exclusive`); a background send reserves it before its task exists and hands it to the task, which
 * releases it when it ends (`reserved`). Each holder releases only its own hold.
 */
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import { SendActive } from "../../Errors.js"
import type { SessionId } from "../../Ids.js"
import { CancelSignal, SendDone } from "../clock/wake.js"
import type { Interrupted } from "./interrupt.js"

/** How far a foreground send got, and what its cancellation did. */
export interface SendProgress {
  /** Its input reached the terminal (a cancel before that writes nothing and signals nothing). */
  written: boolean
  interrupted: Interrupted | undefined
}

/**
 * A foreground send in flight: how a cancel reaches it (it runs in its caller's fiber: the cancel is a
 * signal its waits listen to, and the send then ends interrupted, as if its fiber had been), and `done`
 * once its slot is free again.
 */
export interface ActiveSend {
  readonly cancel: CancelSignal
  readonly progress: SendProgress
  readonly done: SendDone
}

/** A background send's hold, from before its task exists until the task ends. */
export interface Reservation {
  taskId: string | undefined
}

/** Who holds the slot. */
export type SlotState =
  | { readonly _tag: "Free" }
  | { readonly _tag: "Foreground"; readonly send: ActiveSend }
  | { readonly _tag: "Background"; readonly reservation: Reservation }

const free: SlotState = { _tag: "Free" }

/** Who holds a session's one send at a time. */
export class SendSlot {
  state: SlotState = free

  /** The background task holding the slot, once it has been handed over. */
  get taskId(): string | undefined {
    return this.state._tag === "Background" ? this.state.reservation.taskId : undefined
  }

  /** The foreground send holding the slot. */
  get foreground(): ActiveSend | undefined {
    return this.state._tag === "Foreground" ? this.state.send : undefined
  }

  /** Take the slot for a foreground send; `undefined` when it is held. */
  tryForeground(): ActiveSend | undefined {
    if (this.state._tag !== "Free") return undefined
    const send: ActiveSend = {
      cancel: new CancelSignal(),
      progress: { written: false, interrupted: undefined },
      done: new SendDone()
    }
    this.state = { _tag: "Foreground", send }
    return send
  }

  /** Reserve the slot for a background send; `undefined` when it is held. */
  tryReserve(): Reservation | undefined {
    if (this.state._tag !== "Free") return undefined
    const reservation: Reservation = { taskId: undefined }
    this.state = { _tag: "Background", reservation }
    return reservation
  }

  /** The reservation's task exists now (a task that already ended has released it: nothing changes then). */
  handOff(reservation: Reservation, taskId: string): void {
    reservation.taskId = taskId
  }

  /** Release a hold: only the holder's own (a later holder is never released by an earlier one). */
  release(holder: ActiveSend | Reservation): void {
    const state = this.state
    if (
      (state._tag === "Foreground" && state.send === holder) ||
      (state._tag === "Background" && state.reservation === holder)
    ) this.state = free
  }
}

const sendActive = (id: SessionId, slot: SendSlot) =>
  new SendActive({ sessionId: id, ...(slot.taskId !== undefined ? { taskId: slot.taskId } : {}) })

/** What `uninterruptibleMask` hands its body: makes a part of it interruptible again. */
export type Restore = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/**
 * Run a foreground send in the session's slot, in its caller's fiber, with the signal a cancel raises (no
 * fiber is forked per send); interrupting the caller stops it too. One uninterruptible region for the slot
 * and the send (its waits are restored to interruptible): the slot is released however the send ends, with
 * fewer runtime operations than `ensuring` around a mask, and only after the send has finished, its SIGINT
 * included.
 */
export const exclusive = <A, E>(
  id: SessionId,
  slot: SendSlot,
  run: (send: ActiveSend, restore: Restore) => Effect.Effect<A, E>
): Effect.Effect<A, E | SendActive> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.suspend((): Effect.Effect<A, E | SendActive> => {
      const send = slot.tryForeground()
      if (send === undefined) return Effect.fail(sendActive(id, slot))
      return Effect.flatMap(Effect.exit(run(send, restore)), (exit): Exit.Exit<A, E> => {
        slot.release(send)
        send.done.open()
        return exit
      })
    })
  )

/**
 * Start a background send in the session's slot: reserved before its task exists, released if the start
 * fails or is interrupted, else kept by the task (`start` hands it over and releases it when the task ends).
 * The start is uninterruptible but for what `start` restores (the probe before the write): the write, the
 * task's start and the hand-over happen together or not at all.
 */
export const reserved = <A, E>(
  id: SessionId,
  slot: SendSlot,
  start: (reservation: Reservation, restore: Restore) => Effect.Effect<A, E>
): Effect.Effect<A, E | SendActive> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.suspend((): Effect.Effect<A, E | SendActive> => {
      const reservation = slot.tryReserve()
      if (reservation === undefined) return Effect.fail(sendActive(id, slot))
      return Effect.onError(start(reservation, restore), () =>
        Effect.sync(() => {
          if (reservation.taskId === undefined) slot.release(reservation)
        }))
    })
  )
