import * as Effect from "effect/Effect"
import { InvalidInput } from "../../Errors.js"
import type { ProcessInspector } from "../../ProcessInspector.js"
import type { OpenRequest, SessionType } from "../../Session.js"
import type { Resolved, ShellDialects } from "../../ShellDialects.js"
import type { TerminalConfig } from "../../TerminalConfig.js"
import type { SessionRuntime } from "./runtime.js"

/**
 * The dialect and program of a session's shell: the request's `shell`, else the configured one (a
 * `command` session has none, and takes no `shell`).
 */
export const shellOf = (
  dialects: ShellDialects["Type"],
  config: TerminalConfig,
  type: SessionType,
  request: OpenRequest
): Effect.Effect<Resolved | undefined, InvalidInput> => {
  if (type === "command") {
    return request.shell === undefined ? Effect.succeed(undefined) : Effect.fail(
      new InvalidInput({ field: "shell", reason: "applies to a shell session; a command session runs its argv" })
    )
  }
  return request.shell !== undefined ? dialects.resolve(request.shell) : dialects.resolve(config.shell)
}

/**
 * Type a dialect's start-up input once the shell waits at its first prompt: ours (its prompt-end marker was
 * seen: fish, which is asked to draw it again), or its own (it printed, the output paused for
 * `pollIntervalMs`, and the shell itself is blocked reading its terminal, where the inspector can tell:
 * PowerShell, which gets its integration so). Typed earlier, it could reach a shell that is still reading
 * the answers to its own terminal queries (.NET asks for the cursor position as it starts), or be echoed
 * by the terminal before the line editor takes over. Bounded by the open's timeout. Answers the marker
 * sequence number at the write: only a prompt after it ends the open.
 */
export const typeStartupInput = (
  runtime: SessionRuntime,
  inspector: ProcessInspector["Type"],
  config: TerminalConfig,
  input: string
): Effect.Effect<number> =>
  Effect.gen(function*() {
    const { activity } = runtime
    const prompted = () => runtime.shell.since(0).some((marker) => marker.kind === "B")
    while (runtime.exit === undefined && !prompted()) {
      const changed = activity.version
      if (activity.bytes === 0) {
        yield* activity.change(changed)
        continue
      }
      if (yield* activity.changeOrSleep(changed, config.pollIntervalMs)) continue
      if (!inspector.exact) break
      const probe = yield* inspector.probe(runtime.terminal)
      if (probe._tag === "Snapshot" && probe.pgid === runtime.process.pid && probe.waitingOnTerminal) break
    }
  }).pipe(
    Effect.timeout(config.openTimeoutMs),
    Effect.ignore,
    Effect.zipRight(Effect.suspend(() => {
      const baseline = runtime.shell.seq
      return runtime.exit === undefined
        ? Effect.as(runtime.process.write(input), baseline)
        : Effect.succeed(baseline)
    }))
  )

/** An output that ends at the shell's prompt, without the padding the shell printed before it (`promptPadding`). */
export const withoutPadding = (
  runtime: SessionRuntime,
  settled: { readonly _tag: string },
  output: string
): string => {
  const padding = runtime.dialect?.promptPadding
  return padding === undefined || settled._tag !== "Prompt"
    ? output
    : output.replace(padding, "")
}
