/**
 * The text a model reads: short, stable, the facts first (`[wait: prompt] [exit: 0]`), then the output;
 * always within `maxResultBytes`, with ids and facts kept when the body must be cut.
 *
 * @since 0.1.0
 */
import type { Session } from "@agent-terminal/core"
import { Utf8 } from "@agent-terminal/terminal"

const status = (value: Session.SessionStatus): string =>
  value._tag === "running"
    ? "running"
    : `exited${value.signal !== null ? ` by ${value.signal}` : ` with ${value.exitCode ?? "unknown status"}`}`

/**
 * Put the facts line and a body together within `maxBytes`: the facts first (cut only if they alone do
 * not fit), then as much of the body as fits, keeping its head and tail.
 *
 * @since 0.1.0
 */
export const bounded = (facts: string, body: string, maxBytes: number): string => {
  const factsBytes = Utf8.byteLength(facts)
  if (factsBytes >= maxBytes) return Utf8.cutHead(facts, maxBytes)
  if (body === "") return facts
  const room = maxBytes - factsBytes - 1
  if (room <= 0) return facts
  const cut = Utf8.headTail(body, room)
  return cut.text === "" ? facts : `${facts}\n${cut.text}`
}

/**
 * A send's result.
 *
 * @since 0.1.0
 */
export const sendResult = (result: Session.SendResult, maxBytes: number): string => {
  const facts = [`[wait: ${result.waitReason}]`]
  if (result.exitCode !== undefined) facts.push(`[exit: ${result.exitCode}]`)
  if (result.sessionStatus._tag === "exited") facts.push(`[session: ${status(result.sessionStatus)}]`)
  if (result.continuation === true) facts.push("[continuation prompt: the command line is unfinished]")
  if (result.waitReason === "inferred_idle" || result.waitReason === "timeout") {
    facts.push("[the command may still be running]")
  }
  if (result.truncated) facts.push("[truncated]")
  const body = result.screen === undefined ? result.output : [
    result.output,
    `[full-screen program: screen ${result.screen.rows.length} rows, cursor ${result.screen.cursor.row + 1}:${
      result.screen.cursor.col + 1
    }]`,
    ...result.screen.rows
  ].join("\n")
  return bounded(facts.join(" "), body, maxBytes)
}

/**
 * An open's result.
 *
 * @since 0.1.0
 */
export const openResult = (result: Session.OpenResult, maxBytes: number): string =>
  bounded(
    `[session: ${result.sessionId}] [name: ${result.name}] [pid: ${result.pid}] [${status(result.status)}]`,
    result.motd,
    maxBytes
  )

/**
 * A page of the transcript.
 *
 * @since 0.1.0
 */
export const readResult = (result: Session.ReadResult, maxBytes: number): string =>
  bounded(
    `[lines ${result.lineBegin}-${result.lineEnd} of ${result.totalLines}]${result.truncated ? " [truncated]" : ""}`,
    result.text,
    maxBytes
  )

/**
 * A signal's result.
 *
 * @since 0.1.0
 */
export const signalResult = (result: Session.SignalResult, signal: string, maxBytes: number): string =>
  bounded(
    `[${signal} → process group ${result.targetPgid}: ${result.delivered ? "delivered" : "no such group"}]`,
    "",
    maxBytes
  )

/**
 * A close's result.
 *
 * @since 0.1.0
 */
export const closeResult = (result: Session.CloseResult, maxBytes: number): string =>
  bounded(
    `[${result.outcome}: ${result.sessionId}]${
      result.survivors.length > 0 ? ` [survivors: ${result.survivors.join(", ")}]` : ""
    }`,
    "",
    maxBytes
  )

/**
 * The session list.
 *
 * @since 0.1.0
 */
export const listResult = (sessions: ReadonlyArray<Session.SessionInfo>, maxBytes: number): string =>
  bounded(
    `[sessions: ${sessions.length}]`,
    sessions.map((session) =>
      `${session.sessionId} ${session.name} ${session.type} pid ${session.pid} ${status(session.status)}${
        session.busy ? " busy" : ""
      }${session.cwd !== undefined ? ` cwd ${session.cwd}` : ""}`
    ).join("\n"),
    maxBytes
  )

/**
 * A failure: its tag first, then its message.
 *
 * @since 0.1.0
 */
export const failure = (tag: string, message: string, maxBytes: number): string =>
  bounded(`[error: ${tag}]`, message, maxBytes)
