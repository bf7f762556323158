import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type {
  ControlChange,
  OwnerRecord,
  RunRecord,
  TaskRecord,
  TerminalRecord,
  TerminalRegistry
} from "../TerminalRegistry.js"

type Service = TerminalRegistry["Type"]

/** The registry in plain maps. */
export const make = (): Service => {
  const runs = new Map<number, RunRecord>()
  const owners = new Map<string, OwnerRecord>()
  const terminals = new Map<string, TerminalRecord>()
  const tasks = new Map<string, TaskRecord>()
  const audit: Array<ControlChange> = []
  let nextRun = 1

  const endRun = (runId: number, at: number, how: "stopped" | "died") => {
    const run = runs.get(runId)
    if (run === undefined || run.ended !== undefined) return
    runs.set(runId, { ...run, endedAt: at, ended: how })
    for (const terminal of terminals.values()) {
      if (terminal.runId === runId && terminal.endedAt === undefined) {
        terminals.set(terminal.sessionId, {
          ...terminal,
          endedAt: at,
          endReason: how === "stopped" ? "daemon-stopped" : "daemon-died"
        })
      }
    }
    for (const task of tasks.values()) {
      if (task.runId === runId && task.endedAt === undefined) {
        tasks.set(task.taskId, { ...task, endedAt: at, status: how === "stopped" ? "daemon-stopped" : "daemon-died" })
      }
    }
  }

  return {
    startRun: (pid, at) =>
      Effect.sync(() => {
        const died = [...runs.values()].filter((run) => run.ended === undefined)
        for (const run of died) endRun(run.runId, run.lastSeenAt, "died")
        const runId = nextRun++
        runs.set(runId, { runId, pid, startedAt: at, lastSeenAt: at, endedAt: undefined, ended: undefined })
        return { runId, died: died.map((run) => runs.get(run.runId)!) }
      }),
    heartbeat: (runId, at) =>
      Effect.sync(() => {
        const run = runs.get(runId)
        if (run !== undefined) runs.set(runId, { ...run, lastSeenAt: at })
      }),
    stopRun: (runId, at) => Effect.sync(() => endRun(runId, at, "stopped")),
    owner: (name) => Effect.sync(() => Option.fromNullable(owners.get(name))),
    addOwner: (record) =>
      Effect.sync(() => {
        if (owners.has(record.name)) return false
        owners.set(record.name, record)
        return true
      }),
    ownerSeen: (name, at) =>
      Effect.sync(() => {
        const owner = owners.get(name)
        if (owner !== undefined) owners.set(name, { ...owner, lastSeenAt: at })
      }),
    terminalOpened: (record) =>
      Effect.sync(() => {
        terminals.set(record.sessionId, {
          ...record,
          endedAt: undefined,
          endReason: undefined,
          exitCode: undefined,
          signal: undefined
        })
      }),
    terminalEnded: (sessionId, end) =>
      Effect.sync(() => {
        const terminal = terminals.get(sessionId)
        if (terminal === undefined || terminal.endedAt !== undefined) return
        terminals.set(sessionId, {
          ...terminal,
          endedAt: end.at,
          endReason: end.reason,
          exitCode: end.exitCode,
          signal: end.signal
        })
      }),
    terminal: (sessionId) => Effect.sync(() => Option.fromNullable(terminals.get(sessionId))),
    terminals: (owner) => Effect.sync(() => [...terminals.values()].filter((terminal) => terminal.owner === owner)),
    taskStarted: (record) =>
      Effect.sync(() => {
        tasks.set(record.taskId, { ...record, endedAt: undefined, status: undefined })
      }),
    taskEnded: (taskId, at, status) =>
      Effect.sync(() => {
        const task = tasks.get(taskId)
        if (task !== undefined && task.endedAt === undefined) tasks.set(taskId, { ...task, endedAt: at, status })
      }),
    task: (taskId) => Effect.sync(() => Option.fromNullable(tasks.get(taskId))),
    run: (runId) => Effect.sync(() => Option.fromNullable(runs.get(runId))),
    audit: (changes) =>
      Effect.sync(() => {
        audit.push(...changes)
      }),
    auditOf: (sessionId, limit = 1000) =>
      Effect.sync(() => audit.filter((change) => change.sessionId === sessionId).slice(-limit))
  }
}
