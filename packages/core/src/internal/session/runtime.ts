/**
 * One open session as the service holds it (`SessionRuntime`), and the emulator it parses its output with.
 */
import { Emulator, ShellMarkers } from "@agent-terminal/terminal"
import type * as Deferred from "effect/Deferred"
import type * as Scope from "effect/Scope"
import { SessionExited } from "../../Errors.js"
import type { OwnerId, SessionId } from "../../Ids.js"
import type { TerminalRef } from "../../ProcessInspector.js"
import type { ExitStatus, PtyProcess } from "../../PtyBackend.js"
import type { SessionInfo, SessionStatus, SessionType } from "../../Session.js"
import type { Dialect } from "../../ShellDialect.js"
import type { TerminalConfig } from "../../TerminalConfig.js"
import type { Activity } from "../clock/wake.js"
import type { ControlLease } from "../oversight/control.js"
import type { SendSlot } from "../send/slot.js"
import type { ShellState } from "./shellState.js"
import type { Watchers } from "./watchers.js"

/** Everything the service holds for one open session. */
export interface SessionRuntime {
  readonly id: SessionId
  readonly owner: OwnerId
  readonly name: string
  readonly type: SessionType
  readonly cwd: string
  readonly nonce: string | undefined
  /** The shell's dialect (a `shell` session). */
  readonly dialect: Dialect | undefined
  readonly process: PtyProcess
  /** The session's terminal as the inspector knows it (the shell's pid and the pty slave). */
  readonly terminal: TerminalRef
  readonly emulator: Emulator.Emulator
  readonly scope: Scope.CloseableScope
  readonly shell: ShellState
  readonly activity: Activity
  /** The one send (foreground, or a background task) the session takes at a time. */
  readonly slot: SendSlot
  /** Completes once the program exited and all its output was read. */
  readonly drained: Deferred.Deferred<ExitStatus>
  exit: ExitStatus | undefined
  /** Watches of the session (the live view), fed by the reader as it parses (`PtyService.watch`). */
  readonly watchers: Watchers
  /** Who holds the keyboard: the agent, or a person of the live view (`Oversight`). */
  readonly control: ControlLease
  /** The terminal's size now. */
  size: { cols: number; rows: number }
}

/** The session's exit as the error a request to it gets (`SessionExited`); only once it has exited. */
export const exitedError = (runtime: SessionRuntime): SessionExited =>
  new SessionExited({ sessionId: runtime.id, exitCode: runtime.exit!.exitCode, signal: runtime.exit!.signal })

export const statusOf = (session: SessionRuntime): SessionStatus =>
  session.exit === undefined
    ? { _tag: "running" }
    : { _tag: "exited", exitCode: session.exit.exitCode, signal: session.exit.signal }

/** The session as listed (the cwd it was opened in). */
export const infoOf = (runtime: SessionRuntime): SessionInfo => ({
  sessionId: runtime.id,
  name: runtime.name,
  type: runtime.type,
  pid: runtime.process.pid,
  status: statusOf(runtime),
  cwd: runtime.cwd,
  containment: runtime.process.containment,
  busy: runtime.slot.taskId !== undefined,
  ...(runtime.dialect !== undefined ? { shell: runtime.dialect.name } : {})
})

/** A fresh emulator for a session, with its marker decoding and query answers wired. */
export const makeEmulator = (
  config: TerminalConfig,
  size: { readonly cols: number; readonly rows: number },
  nonce: string | undefined,
  shell: ShellState,
  replies: Array<string>
): Emulator.Emulator =>
  new Emulator.Emulator({
    cols: size.cols,
    rows: size.rows,
    scrollbackLines: config.scrollbackLines,
    scrollbackMaxBytes: config.scrollbackMaxBytes
  }, {
    onReply: (data) => replies.push(data),
    onMarker: (payload, at) => {
      if (nonce === undefined) return
      const marker = ShellMarkers.decode(payload, nonce)
      if (marker !== undefined) shell.record(marker, at)
    }
  })

/** `bytes` random bytes as hex: 12 give the 96 bits of a marker nonce or an id. */
export const randomHex = (bytes = 12): string => {
  const random = new Uint8Array(bytes)
  globalThis.crypto.getRandomValues(random)
  let hex = ""
  for (const byte of random) hex += byte.toString(16).padStart(2, "0")
  return hex
}
