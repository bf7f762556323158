/**
 * A watch over a machine's stream, read as a mailbox: its first item must be the snapshot; what fails before
 * it is the caller's typed error when `typed` says so, else a transport failure or `MachineUnavailable`
 * (defects, as every failure of the transport is). Shared by the fleet's terminal and oversight clients.
 */
import type { Watch } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import * as Mailbox from "effect/Mailbox"
import * as Stream from "effect/Stream"
import { MachineUnavailable } from "../FleetErrors.js"

export const fromMailbox = <E>(
  machine: string,
  mailbox: Mailbox.ReadonlyMailbox<Watch.Snapshot | Watch.WatchEvent, unknown>,
  options: {
    readonly now: () => number
    readonly isTransport: (error: unknown) => boolean
    readonly typed: (error: unknown) => error is E
  }
): Effect.Effect<Watch.Watch, E> =>
  Effect.gen(function*() {
    const unavailable = (reason: string) => new MachineUnavailable({ machine, since: options.now(), reason })
    const first = yield* mailbox.take.pipe(
      Effect.catchAll((error) =>
        options.typed(error)
          ? Effect.fail(error)
          : Effect.die(options.isTransport(error) ? error : unavailable("the watch ended before its snapshot"))
      )
    )
    if (first._tag !== "Snapshot") return yield* Effect.die(unavailable("the watch did not start with a snapshot"))
    const events = Mailbox.toStream(mailbox).pipe(
      Stream.orDie,
      Stream.filter((item): item is Watch.WatchEvent => item._tag !== "Snapshot")
    )
    return { snapshot: first, events }
  })
