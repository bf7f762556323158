import { Errors, type Ids, PtyService, type Session, TaskRuntime } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * An in-memory `PtyService` (the operations the tools use; any other dies as not implemented) for unit tests of the tool adapter: a "session" echoes what it is sent, owners
 * are checked like the real service, and `failWith` makes every operation fail with a given error.
 */
export const fakeTerminal = (options: { readonly failWith?: Errors.TerminalError } = {}) => {
  const sessions = new Map<string, { owner: Ids.OwnerId; info: Session.SessionInfo; transcript: Array<string> }>()
  let counter = 0
  type Entry = { owner: Ids.OwnerId; info: Session.SessionInfo; transcript: Array<string> }
  const lookup = (
    owner: Ids.OwnerId,
    sessionId: string
  ): Effect.Effect<Entry, Errors.SessionNotFound | Errors.ForeignSession> => {
    const entry = sessions.get(sessionId)
    if (entry === undefined) return Effect.fail(new Errors.SessionNotFound({ sessionId }))
    if (entry.owner !== owner) return Effect.fail(new Errors.ForeignSession({ sessionId }))
    return Effect.succeed(entry)
  }
  const failing = <A, E>(effect: Effect.Effect<A, E>) =>
    options.failWith === undefined ? effect : Effect.fail(options.failWith as never)
  const service = {
    open: (owner, request) =>
      failing(Effect.sync(() => {
        counter++
        const info: Session.SessionInfo = {
          sessionId: `s-fake${String(counter).padStart(8, "0")}`,
          name: request.name ?? `shell-${counter}`,
          type: request.type ?? "shell",
          pid: 4000 + counter,
          status: { _tag: "running" },
          cwd: request.cwd ?? "/",
          containment: "sweep",
          busy: false
        }
        sessions.set(info.sessionId, { owner, info, transcript: ["$ "] })
        return { ...info, motd: "$ ", limits: {} }
      })),
    send: (owner, sessionId, request) =>
      failing(Effect.map(lookup(owner, sessionId), (entry): Session.SendResult => {
        const output = request.text ?? request.paste ?? (request.keys ?? []).join(" ")
        entry.transcript.push(`$ ${output}`, output)
        return {
          output,
          waitReason: "prompt",
          exitCode: 0,
          sessionStatus: { _tag: "running" },
          truncated: false,
          elapsedMs: 1
        }
      })),
    read: (owner, sessionId) =>
      failing(Effect.map(lookup(owner, sessionId), (entry) => ({
        text: entry.transcript.join("\n"),
        totalLines: entry.transcript.length,
        lineBegin: 0,
        lineEnd: entry.transcript.length,
        truncated: false
      }))),
    signal: (owner, sessionId) =>
      failing(Effect.map(lookup(owner, sessionId), (entry) => ({ delivered: true, targetPgid: entry.info.pid }))),
    close: (owner, sessionId) =>
      failing(Effect.map(lookup(owner, sessionId), () => {
        sessions.delete(sessionId)
        return { sessionId, outcome: "closed" as const, survivors: [] }
      })),
    list: (owner) =>
      Effect.sync(() => Array.from(sessions.values()).filter((entry) => entry.owner === owner).map((e) => e.info)),
    closeOwner: (owner) =>
      Effect.sync(() => {
        for (const [id, entry] of sessions) if (entry.owner === owner) sessions.delete(id)
      })
  } satisfies Partial<PtyService.PtyService["Type"]>
  return {
    sessions,
    layer: Layer.merge(Layer.mock(PtyService.PtyService, service), TaskRuntime.layer)
  }
}
