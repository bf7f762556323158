/**
 * The audit trail's entries as the service records them: one entry (who, what, when), and the agent's send
 * entry — its input and how it settled, also marked in the session's recording.
 */
import * as Effect from "effect/Effect"
import * as Audit from "../../Audit.js"
import type { OwnerId, SessionId } from "../../Ids.js"
import type { SendRequest, SendResult } from "../../Session.js"
import type { Deps } from "../session/registry.js"
import type { SessionRuntime } from "../session/runtime.js"

/** Record an audit entry; a failure never stops the terminal work. */
export const record = (deps: Deps, runtime: SessionRuntime, actor: string, action: string, detail?: string) =>
  deps.audit.record({
    sessionId: runtime.id,
    at: deps.timers.now(),
    actor,
    action,
    ...(detail !== undefined ? { detail } : {})
  }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("audit: an entry could not be recorded", cause)))

const sendLabel = (request: SendRequest): string =>
  request.steps !== undefined
    ? `steps: ${request.steps.map(sendLabel).join(" | ")}`
    : request.text !== undefined
    ? request.text
    : request.paste !== undefined
    ? `paste: ${request.paste}`
    : `keys: ${(request.keys ?? []).join(" ")}`

const settledLabel = (result: SendResult): string =>
  result.waitReason === "prompt" && result.exitCode !== undefined
    ? `prompt, exit ${result.exitCode}`
    : result.waitReason

/** An agent's send, once settled: its audit entry, and a marker in the recording (its text and how it settled). */
export const agentSend = (deps: Deps, owner: OwnerId, id: SessionId, request: SendRequest, result: SendResult) =>
  Effect.suspend(() => {
    const entry = deps.sessions.get(id)
    if (entry === undefined || entry._tag === "Opening") return Effect.void
    const runtime = entry.runtime
    const label = Audit.printable(sendLabel(request))
    runtime.watchers.recording?.marker(`send: ${label} → ${settledLabel(result)}`)
    return record(deps, runtime, owner, "send", `${label} → ${settledLabel(result)}`)
  })
