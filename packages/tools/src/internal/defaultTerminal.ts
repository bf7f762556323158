/**
 * An owner's default terminal: `terminal_send` without a `sessionId` goes to the owner's terminal named
 * `default`, opened on its first use (its id and first screen come back in that send's result). A task that
 * needs one terminal then needs no `terminal_open`, and closing stays optional: an owner's terminals end with
 * it. A default terminal whose shell exited (`exit`) is closed and opened afresh on the next such send.
 */
import { type Errors, Ids, type PtyService, type Session } from "@agent-terminal/core"
import * as Effect from "effect/Effect"

/** The name of an owner's default terminal. */
export const defaultName = "default"

/** The default terminal to send to; `opened` when it was opened for this call. */
export interface DefaultTerminal {
  readonly id: Ids.SessionId
  readonly opened?: Session.OpenResult | undefined
}

type OpenError = Effect.Effect.Error<ReturnType<PtyService.PtyService["Type"]["open"]>>

/** The default terminals of a service's owners (the id each one's is known by, once found). */
export const make = (service: PtyService.PtyService["Type"]) => {
  const known = new Map<Ids.OwnerId, Ids.SessionId>()

  const find = (owner: Ids.OwnerId): Effect.Effect<DefaultTerminal, OpenError | Errors.CleanupFailed> =>
    Effect.flatMap(service.list(owner), (sessions) => {
      const found = sessions.find((session) => session.name === defaultName)
      if (found !== undefined && found.status._tag === "running") {
        const id = Ids.SessionId.make(found.sessionId)
        known.set(owner, id)
        return Effect.succeed({ id })
      }
      const cleared = found === undefined
        ? Effect.void
        : Effect.asVoid(
          service.close(owner, Ids.SessionId.make(found.sessionId)).pipe(
            Effect.catchTags({
              SessionNotFound: () => Effect.void,
              ForeignSession: () => Effect.void,
              SessionLost: () => Effect.void
            })
          )
        )
      return Effect.flatMap(cleared, () =>
        service.open(owner, { name: defaultName }).pipe(
          Effect.map((opened): DefaultTerminal => {
            const id = Ids.SessionId.make(opened.sessionId)
            known.set(owner, id)
            return { id, opened }
          }),
          // another call opened it meanwhile: that one is the default
          Effect.catchTag("DuplicateName", (duplicate) => {
            const id = Ids.SessionId.make(duplicate.sessionId)
            known.set(owner, id)
            return Effect.succeed<DefaultTerminal>({ id })
          })
        ))
    })

  /** The owner's default terminal: the one known, else the one named `default`, else a new one. */
  const resolve = (owner: Ids.OwnerId) => {
    const id = known.get(owner)
    return id === undefined ? find(owner) : Effect.succeed<DefaultTerminal>({ id })
  }

  /**
   * Run `use` on the owner's default terminal; when the one known is gone (closed, exited, lost), find or
   * open it again, once.
   */
  const withDefault = <A, E>(owner: Ids.OwnerId, use: (terminal: DefaultTerminal) => Effect.Effect<A, E>) =>
    Effect.flatMap(resolve(owner), (terminal) =>
      use(terminal).pipe(Effect.catchIf(
        (error) => terminal.opened === undefined && isGone(error),
        () => {
          known.delete(owner)
          return Effect.flatMap(find(owner), use)
        }
      )))

  return { withDefault }
}

const gone = new Set(["SessionNotFound", "SessionLost", "SessionExited", "ForeignSession"])

const isGone = (error: unknown): boolean =>
  typeof error === "object" && error !== null && gone.has((error as { readonly _tag?: string })._tag ?? "")
