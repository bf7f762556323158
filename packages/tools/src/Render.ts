/**
 * The text a model reads: short, stable, the facts first (`[wait: prompt] [exit: 0]`), then the output;
 * always within `maxResultBytes`, with ids and facts kept when the body must be cut.
 *
 * @since 0.1.0
 */
import { type Exec, type PtyService, Session } from "@agent-terminal/core"
import { Capture, Utf8 } from "@agent-terminal/terminal"
import type { TerminalToolkit } from "./TerminalTools.js"

const status = (value: Session.SessionStatus): string =>
  value._tag === "running"
    ? "running"
    : `exited${value.signal !== null ? ` by ${value.signal}` : ` with ${value.exitCode ?? "unknown status"}`}`

const chooseFacts = (fullFacts: string, maxBytes: number, compact: string | undefined) =>
  compact !== undefined && Utf8.byteLength(fullFacts) > maxBytes ? compact : fullFacts

const truncatedFact = "[truncated]"

/**
 * Put the facts line and a body together within `maxBytes`: the facts first (when they alone do not fit,
 * the `compact` form of the same facts, cut only if even that does not fit — ids come first in both, so
 * they survive), then as much of the body as fits, keeping its head and tail; a body cut here adds
 * `[truncated]` to the facts when there is room for it.
 *
 * @since 0.1.0
 */
export const bounded = (fullFacts: string, body: string, maxBytes: number, compact?: string): string => {
  const facts = chooseFacts(fullFacts, maxBytes, compact)
  const factsBytes = Utf8.byteLength(facts)
  if (factsBytes >= maxBytes) return Utf8.cutHead(facts, maxBytes)
  if (body === "") return facts
  if (factsBytes + 1 + Utf8.byteLength(body) <= maxBytes) return `${facts}\n${body}`
  const marked = facts.includes(truncatedFact) || factsBytes + 1 + truncatedFact.length + 2 > maxBytes
    ? facts
    : `${facts} ${truncatedFact}`
  const room = maxBytes - Utf8.byteLength(marked) - 1
  if (room <= 0) return marked
  // an omission line already in the body (a run's own cut) absorbs this cut: one line counts all that is left out
  const cut = Capture.fit(body, room)
  // Too little room for the omission marker: only a tail is left; start it on a whole line when there is one.
  const firstBreak = cut.text.indexOf("\n")
  const tailOnly = body.endsWith(cut.text) && body.length > cut.text.length
  const midLine = tailOnly && body[body.length - cut.text.length - 1] !== "\n"
  const text = midLine && firstBreak !== -1 && firstBreak < cut.text.length - 1
    ? cut.text.slice(firstBreak + 1)
    : cut.text
  return text === "" ? marked : `${marked}\n${text}`
}

/** The fewest identical rows in a row that are shown as one. */
const MIN_RUN = 3

/**
 * A full-screen program's rows as the model reads them: trailing blanks trimmed, and each run of identical
 * rows (vim's `~` past the end of a file, empty rows, a pager's filler) shown once with its count
 * (`~  [×31]`), so the screen's layout is kept without paying for its padding.
 *
 * @since 0.4.0
 */
export const screenRows = (rows: ReadonlyArray<string>): Array<string> => {
  const trimmed = rows.map((row) => row.trimEnd())
  const out: Array<string> = []
  for (let i = 0; i < trimmed.length;) {
    let j = i + 1
    while (j < trimmed.length && trimmed[j] === trimmed[i]) j++
    const run = j - i
    if (run >= MIN_RUN) out.push(trimmed[i] === "" ? `[×${run} empty rows]` : `${trimmed[i]}  [×${run}]`)
    else for (let k = i; k < j; k++) out.push(trimmed[k]!)
    i = j
  }
  return out
}

/** The screen block of a result: its size and cursor, then its rows (`screenRows`). */
const screenBlock = (screen: Session.ScreenSnapshot): Array<string> => [
  `[full-screen program: screen ${screen.rows.length} rows, cursor ${screen.cursor.row + 1}:${screen.cursor.col + 1}]`,
  ...screenRows(screen.rows)
]

/** A match as the facts line shows it: the text, then a regex's groups. */
const matchFact = (match: Session.Match): string => {
  if (match.listening !== undefined) return `[match: ${Session.listenerText(match.listening)}]`
  const groups = match.groups === undefined ? "" : ` [groups: ${JSON.stringify(match.groups)}]`
  return `[match: ${JSON.stringify(Utf8.cutHead(match.text, 200))}]${groups}`
}

/** The facts of one step of a batch. */
const stepFacts = (step: Session.StepResult, index: number): string =>
  [
    `[step ${index + 1}: ${step.waitReason}]`,
    ...(step.exitCode !== undefined ? [`[exit: ${step.exitCode}]`] : []),
    ...(step.match !== undefined ? [matchFact(step.match)] : []),
    ...(step.continuation === true ? ["[continuation]"] : []),
    ...(step.truncated ? ["[truncated]"] : [])
  ].join(" ")

/**
 * A batch's result (`steps`): one facts line for the batch, then each step's facts and output in order.
 * Each step's output was already bounded by the service (the last step's first).
 */
const batchResult = (result: Session.SendResult, steps: ReadonlyArray<Session.StepResult>, maxBytes: number) => {
  const facts = [`[steps: ${steps.length} run]`]
  if (result.stoppedAt !== undefined) facts.push(`[stopped at step ${result.stoppedAt + 1}: ${result.waitReason}]`)
  if (result.sessionStatus._tag === "exited") facts.push(`[session: ${status(result.sessionStatus)}]`)
  const body = steps.map((step, index) => `${stepFacts(step, index)}${step.output === "" ? "" : `\n${step.output}`}`)
  if (result.screen !== undefined) body.push(...screenBlock(result.screen))
  return bounded(facts.join(" "), body.join("\n"), maxBytes)
}

/**
 * A send's result: the facts, then its output (and the screen of a full-screen program). `prefix`: facts
 * that come first (a signal's delivery); a send to the owner's default terminal that opened it says so.
 *
 * @since 0.1.0
 */
export const sendResult = (
  result: Session.SendResult & { readonly sessionId?: string | undefined; readonly motd?: string | undefined },
  maxBytes: number,
  prefix: ReadonlyArray<string> = []
): string => {
  if (result.steps !== undefined) return batchResult(result, result.steps, maxBytes)
  const facts = [...prefix, `[wait: ${result.waitReason}]`]
  if (result.taskId !== undefined) facts.push(`[task: ${result.taskId}]`)
  if (result.exitCode !== undefined) facts.push(`[exit: ${result.exitCode}]`)
  if (result.sessionStatus._tag === "exited") facts.push(`[session: ${status(result.sessionStatus)}]`)
  if (result.continuation === true) facts.push("[continuation prompt: the command line is unfinished]")
  if (result.match !== undefined) facts.push(matchFact(result.match))
  if (Session.mayStillRun(result.waitReason)) {
    facts.push("[the command may still be running]")
  }
  if (result.foreground !== undefined) facts.push(`[foreground: ${Session.activityText(result.foreground)}]`)
  if (result.motd !== undefined && result.sessionId !== undefined) facts.push(`[opened: ${result.sessionId}]`)
  if (result.truncated) facts.push("[truncated]")
  const compact = facts.map((fact) =>
    fact.startsWith("[continuation")
      ? "[continuation]"
      : fact.startsWith("[the command may")
      ? "[may still run]"
      : fact.startsWith("[session: ")
      ? "[exited]"
      : fact
  )
  const body = result.screen === undefined ? result.output : [result.output, ...screenBlock(result.screen)].join("\n")
  return bounded(facts.join(" "), body, maxBytes, compact.join(" "))
}

/**
 * An open's result.
 *
 * @since 0.1.0
 */
export const openResult = (result: Session.OpenResult, maxBytes: number): string =>
  bounded(
    `[session: ${result.sessionId}] [name: ${result.name}]${
      result.shell !== undefined ? ` [shell: ${result.shell}]` : ""
    } [pid: ${result.pid}] [${status(result.status)}]${result.recording === true ? " [recorded]" : ""}`,
    result.motd,
    maxBytes,
    `[session: ${result.sessionId}] [pid: ${result.pid}] [${result.status._tag}] [name: ${result.name}]`
  )

/**
 * A page's header, its line numbers counted from the first line ever written (1): `[lines 39901-40000 of
 * 50000]`, and, when the retention bound dropped the oldest lines, which ones: `[lines 1-40000 dropped: the
 * last 10000 are kept]` — an empty page past them says so instead of showing nothing.
 *
 * @since 0.4.0
 */
export const pageHeader = (result: Session.ReadResult): string => {
  const first = result.firstLine ?? 0
  const range = result.lineEnd > result.lineBegin ? `lines ${result.lineBegin + 1}-${result.lineEnd}` : "no lines"
  const dropped = first > 0 ? ` [lines 1-${first} dropped: the last ${result.totalLines} are kept]` : ""
  return `[${range} of ${first + result.totalLines}]${dropped}${result.truncated ? " [truncated]" : ""}`
}

/**
 * A page of the transcript.
 *
 * @since 0.1.0
 */
export const readResult = (result: Session.ReadResult, maxBytes: number): string =>
  bounded(pageHeader(result), result.text, maxBytes)

/**
 * A signal's result: where it went, then — when the call waited for readiness after it — the send's facts
 * and output; a call that was to wait but found the terminal held by a send or task says it did not.
 *
 * @since 0.1.0
 */
export const signalResult = (
  result: Session.SignalResult & Partial<Session.SendResult>,
  signal: string,
  maxBytes: number,
  waited = false
): string => {
  const delivery = `[${signal} → process group ${result.targetPgid}: ${
    result.delivered ? "delivered" : "no such group"
  }]`
  if (result.waitReason !== undefined) return sendResult(result as Session.SendResult, maxBytes, [delivery])
  return bounded(
    waited ? `${delivery} [not waited: a send or a background task holds the terminal]` : delivery,
    "",
    maxBytes
  )
}

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
export const listResult = (sessions: ReadonlyArray<Session.SessionInfo>, maxBytes: number): string => {
  const facts = `[sessions: ${sessions.length}]`
  const full = sessions.map((session) =>
    `${session.sessionId}${machineOf(session.sessionId)} ${session.name} ${session.type}${
      session.shell !== undefined ? ` ${session.shell}` : ""
    } pid ${session.pid} ${status(session.status)}${session.busy ? " busy" : ""}${
      session.cwd !== undefined ? ` cwd ${session.cwd}` : ""
    }`
  ).join("\n")
  const fits = Utf8.byteLength(facts) + 1 + Utf8.byteLength(full) <= maxBytes
  return bounded(facts, fits ? full : sessions.map((session) => session.sessionId).join(" "), maxBytes)
}

/** ` machine m2` for the id of a fleet's machine (`m2~<run>~<random>`); nothing for any other id. */
const machineOf = (sessionId: string): string => {
  const machine = /^([A-Za-z0-9_-]{1,64})~[a-z0-9]{1,8}~/.exec(sessionId)?.[1]
  return machine === undefined ? "" : ` machine ${machine}`
}

/**
 * A resize's result.
 *
 * @since 0.2.0
 */
export const resizeResult = (result: Session.ResizeResult, maxBytes: number): string =>
  bounded(`[size: ${result.cols}x${result.rows}]`, "", maxBytes)

/**
 * A request for a person: its task, and what the person did once they handed the terminal back.
 *
 * @since 0.2.0
 */
export const humanRequestResult = (result: Session.HumanRequestResult, maxBytes: number): string =>
  bounded(
    `[task: ${result.taskId}] [human: ${result.status}]${
      result.status === "pending" ? " [task_output with wait: true returns at the hand-back]" : ""
    }`,
    result.human === undefined ? "" : Session.humanNoteText(result.human),
    maxBytes,
    `[task: ${result.taskId}] [human: ${result.status}]`
  )

const idFacts = [["sessionId", "session"], ["taskId", "task"], ["field", "field"]] as const

/**
 * A failure: its tag and the ids it is about first (`[error: SessionNotFound] [session: s-…]`), then its
 * message.
 *
 * @since 0.1.0
 */
export const failure = (
  tag: string,
  message: string,
  maxBytes: number,
  fields: Readonly<Record<string, unknown>> = {}
): string => {
  const ids = idFacts.flatMap(([key, label]) =>
    typeof fields[key] === "string" ? [{ label, value: fields[key] as string }] : []
  )
  const full = [`[error: ${tag}]`, ...ids.map(({ label, value }) => `[${label}: ${value}]`)].join(" ")
  const compact = [`[error: ${tag}]`, ...ids.map(({ value }) => value)].join(" ")
  // A message reads from its start: keep its head (the output of a command keeps its tail instead).
  const room = maxBytes - Utf8.byteLength(chooseFacts(full, maxBytes, compact)) - 1
  const shown = Utf8.byteLength(message) <= room ? message : room > 8 ? `${Utf8.cutHead(message, room - 3)}…` : ""
  return bounded(full, shown, maxBytes, compact)
}

/**
 * A background task's view: its status (and, once it ended, how), then its new output.
 *
 * @since 0.1.0
 */
export const taskView = (
  view: {
    readonly taskId: string
    readonly status: string
    readonly output: string
    readonly result?: unknown
    readonly error?: { readonly _tag: string; readonly message: string } | undefined
    readonly match?: Session.Match | undefined
    readonly elapsedMs: number
  },
  maxBytes: number
): string => {
  const facts = [`[task: ${view.taskId}]`, `[status: ${view.status}]`]
  if (view.match !== undefined) facts.push(matchFact(view.match))
  const result = view.result as Partial<Session.SendResult> | undefined
  if (result?.waitReason !== undefined) facts.push(`[wait: ${result.waitReason}]`)
  if (result?.exitCode !== undefined) facts.push(`[exit: ${result.exitCode}]`)
  if (view.error !== undefined) facts.push(`[error: ${view.error._tag}]`)
  if (view.status === "waiting_input") facts.push("[the program waits for input]")
  const body = view.error !== undefined
    ? `${view.output}${view.output === "" ? "" : "\n"}${view.error.message}`
    : view.output
  return bounded(facts.join(" "), body, maxBytes)
}

/**
 * A one-shot run (`exec`, `process poll` / `kill`): the task id first, then how it stands — `[exec: exited]
 * [exit: 0]`, `[exec: timeout] [the process tree was killed]`, `[exec: running]` with what to do next —
 * then its output.
 *
 * @since 0.1.0
 */
export const execResult = (result: Exec.ExecResult, maxBytes: number): string => {
  const facts: Array<string> = []
  if (result.taskId !== undefined) facts.push(`[task: ${result.taskId}]`)
  const isRun = result.kind === undefined || result.kind === "exec"
  if (!isRun) facts.push(`[${result.kind}: ${result.status}]`)
  else if (result.reason !== undefined) facts.push(`[exec: ${result.reason}]`)
  else facts.push(`[exec: ${result.status}]`)
  if (result.exitCode !== undefined) facts.push(`[exit: ${result.exitCode}]`)
  if (result.signal !== undefined) facts.push(`[signal: ${result.signal}]`)
  if (result.match !== undefined) facts.push(matchFact(result.match))
  if (isRun && result.reason !== undefined && result.reason !== "exited") {
    facts.push(
      result.reason === "no_output"
        ? "[no output for too long: the process tree was killed]"
        : "[the process tree was killed]"
    )
  }
  if (result.status === "running") facts.push("[still running: process poll with wait: true returns when it ends]")
  if (result.status === "waiting_input") facts.push("[the program waits for input: process submit / write / keys]")
  if (result.truncated) {
    facts.push("[truncated]")
    if (result.taskId !== undefined && isRun) facts.push("[process log pages the full output]")
  }
  if (result.survivors !== undefined) facts.push(`[survivors: ${result.survivors.join(", ")}]`)
  const compact = facts.filter((fact) =>
    !fact.startsWith("[still") && !fact.startsWith("[the ") && !fact.startsWith("[no ") &&
    !fact.startsWith("[process ")
  ).map((fact) => fact.startsWith("[survivors") ? "[survivors]" : fact)
  return bounded(facts.join(" "), result.output, maxBytes, compact.join(" "))
}

/**
 * A `process` tool result, by action.
 *
 * @since 0.1.0
 */
export const processResult = (
  result:
    | { readonly action: "list"; readonly tasks: ReadonlyArray<Exec.TaskSummary> }
    | ({ readonly action: "poll" | "kill" } & Exec.ExecResult)
    | ({ readonly action: "log" } & Exec.LogResult)
    | ({ readonly action: "write" | "keys" | "paste" | "submit" } & Exec.WriteResult)
    | ({ readonly action: "remove" } & Exec.RemoveResult),
  maxBytes: number
): string => {
  switch (result.action) {
    case "list":
      return bounded(
        `[tasks: ${result.tasks.length}]`,
        result.tasks.map((task) =>
          [
            task.taskId,
            task.kind + (task.mode !== undefined ? ` (${task.mode})` : ""),
            task.reason !== undefined ? `${task.status}: ${task.reason}` : task.status,
            ...(task.exitCode !== undefined ? [`exit ${task.exitCode}`] : []),
            `${Math.round(task.elapsedMs / 1000)}s`,
            task.label
          ].join(" ")
        ).join("\n"),
        maxBytes
      )
    case "poll":
    case "kill":
      return execResult(result, maxBytes)
    case "log":
      return bounded(`[task: ${result.taskId}] ${pageHeader(result)}`, result.text, maxBytes)
    case "remove":
      return bounded(`[task: ${result.taskId}] [${result.outcome}]`, "", maxBytes)
    default:
      return bounded(
        `[task: ${result.taskId}] [${result.action}: ${result.bytes} bytes]${result.eof ? " [end of input]" : ""}`,
        "",
        maxBytes
      )
  }
}

/**
 * A snapshot: the size and the cursor (from 1), what holds the terminal, then its rows as a send's screen
 * is shown (`screenRows`).
 *
 * @since 0.4.0
 */
export const snapshotResult = (result: PtyService.SnapshotResult, maxBytes: number): string => {
  const { cursor } = result.screen
  const facts = [`[size: ${result.cols}x${result.rows}]`, `[cursor: ${cursor.row + 1}:${cursor.col + 1}]`]
  if (result.alternate) facts.push("[full-screen program]")
  if (result.busy) facts.push("[busy]")
  if (result.sessionStatus._tag === "exited") facts.push(`[session: ${status(result.sessionStatus)}]`)
  return bounded(facts.join(" "), screenRows(result.screen.rows).join("\n"), maxBytes)
}

/**
 * The names of the tools.
 *
 * @since 0.4.0
 */
export type ToolName = keyof typeof TerminalToolkit.tools

/**
 * Each tool's rendering: its parameters and its (encoded) result to the text a model reads, within
 * `maxBytes`. Total over the tools: a tool without a rendering is a type error.
 *
 * @since 0.4.0
 */
export const renderings: { readonly [K in ToolName]: (payload: any, result: any, maxBytes: number) => string } = {
  terminal_open: (_payload, result, maxBytes) => openResult(result, maxBytes),
  terminal_send: (_payload, result, maxBytes) => sendResult(result, maxBytes),
  terminal_read: (_payload, result, maxBytes) => readResult(result, maxBytes),
  terminal_snapshot: (_payload, result, maxBytes) => snapshotResult(result, maxBytes),
  terminal_signal: (payload, result, maxBytes) =>
    signalResult(result, String(payload?.signal), maxBytes, payload?.wait !== false),
  terminal_close: (_payload, result, maxBytes) => closeResult(result, maxBytes),
  terminal_list: (_payload, result, maxBytes) => listResult(result.sessions, maxBytes),
  terminal_resize: (_payload, result, maxBytes) => resizeResult(result, maxBytes),
  terminal_request_human: (_payload, result, maxBytes) => humanRequestResult(result, maxBytes),
  task_output: (_payload, result, maxBytes) => taskView(result, maxBytes),
  task_kill: (_payload, result, maxBytes) => taskView(result, maxBytes),
  exec: (_payload, result, maxBytes) => execResult(result, maxBytes),
  process: (_payload, result, maxBytes) => processResult(result, maxBytes)
}

/**
 * The fields of each tool's result that its text holds whole (its output, a page, a screen): they are sent
 * once, in the text, and are not part of `structuredContent` (a send that opened the default terminal keeps
 * its `motd` there: its text says only that it opened it). `steps` are a send's steps, whose outputs are in
 * the text too; `result` is a task's send result, whose output is the task's.
 *
 * @since 0.4.0
 */
export const bodyFields: { readonly [K in ToolName]?: ReadonlyArray<string> } = {
  terminal_open: ["motd"],
  terminal_send: ["output"],
  terminal_signal: ["output"],
  terminal_read: ["text"],
  terminal_snapshot: ["screen"],
  task_output: ["output"],
  task_kill: ["output"],
  exec: ["output"],
  process: ["output", "text"]
}
