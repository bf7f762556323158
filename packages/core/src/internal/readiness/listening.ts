/**
 * The `listening` wait: a process of the session (or of a one-shot run) listens on the asked TCP port, or on
 * any socket (`listening: true`), as `/proc` tells (`ProcessInspector.listening`). A server is up the moment
 * the kernel has its socket, whatever it prints. Sockets that were listening before the send (a server
 * started earlier) do not count. Looked at every 100 ms, and at once on new output.
 */
import * as Effect from "effect/Effect"
import { InvalidInput } from "../../Errors.js"
import type { ProcessInspector } from "../../ProcessInspector.js"
import type { Listener, Match, WaitFor } from "../../Session.js"

/** How often the listening sockets are looked at while nothing is printed. */
export const LISTENING_POLL_MS = 100

/** A listener's identity across looks. */
export const listenerKey = (listener: Listener): string =>
  `${listener.pid} ${listener.protocol} ${listener.address} ${listener.port ?? ""}`

/** Whether a listener is what `wanted` asks for: any socket, or a TCP socket on that port. */
const wantedBy = (wanted: true | number) => (listener: Listener) =>
  wanted === true || (listener.protocol !== "unix" && listener.port === wanted)

/** `InvalidInput` when the platform cannot tell who listens (no `/proc`). */
export const unsupported = (
  inspector: ProcessInspector["Type"],
  waitFor: WaitFor | undefined,
  field = "waitFor"
): InvalidInput | undefined =>
  waitFor?.listening !== undefined && inspector.listening === undefined
    ? new InvalidInput({
      field: `${field}.listening`,
      reason: "cannot be told on this platform (it reads /proc: Linux only); wait for a text or regex instead"
    })
    : undefined

/** The sockets listening now under `rootPid`, as keys (the ones a `listening` wait leaves out). */
export const listenersNow = (
  inspector: ProcessInspector["Type"],
  rootPid: number
): Effect.Effect<ReadonlySet<string>> =>
  inspector.listening === undefined
    ? Effect.succeed(new Set())
    : Effect.map(inspector.listening(rootPid), (listeners) => new Set(listeners.map(listenerKey)))

/**
 * Wait until a process under `rootPid` listens as `wanted` asks, on a socket that was not in `before`;
 * `pause(ms)` waits for new output or `ms`, whichever comes first.
 */
export const awaitListening = (
  inspector: ProcessInspector["Type"],
  rootPid: number,
  wanted: true | number,
  before: ReadonlySet<string>,
  pause: (ms: number) => Effect.Effect<void>
): Effect.Effect<Match> => {
  const listening = inspector.listening
  if (listening === undefined) return Effect.never
  const matches = wantedBy(wanted)
  return Effect.gen(function*() {
    while (true) {
      const found = (yield* listening(rootPid)).find((listener) =>
        matches(listener) && !before.has(listenerKey(listener))
      )
      if (found !== undefined) return { text: "", listening: found }
      yield* pause(LISTENING_POLL_MS)
    }
  })
}
