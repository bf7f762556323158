/**
 * One call path for every transport: find the tool, validate its parameters (a bad one is an
 * `InvalidInput` naming the field), run its handler as the current owner, and render the outcome — the
 * structured result (or error with its `_tag` and `message`) and the bounded text a model reads.
 *
 * @since 0.1.0
 */
import { Errors } from "@agent-terminal/core"
import type { Tool } from "@effect/ai"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Render from "./Render.js"
import { TerminalToolkit } from "./TerminalTools.js"

/**
 * What a tool call produced, ready for any transport.
 *
 * @since 0.1.0
 */
export interface ToolOutcome {
  readonly isError: boolean
  /** The result (or the error's fields with `_tag` and `message`) as JSON. */
  readonly structured: Record<string, unknown>
  /** The rendered text, within `maxResultBytes`. */
  readonly text: string
}

/**
 * The names of the tools.
 *
 * @since 0.1.0
 */
export type ToolName = keyof typeof TerminalToolkit.tools

const render = (name: ToolName, payload: any, result: any, maxBytes: number): string => {
  switch (name) {
    case "terminal_open":
      return Render.openResult(result, maxBytes)
    case "terminal_send":
      return Render.sendResult(result, maxBytes)
    case "terminal_read":
      return Render.readResult(result, maxBytes)
    case "terminal_signal":
      return Render.signalResult(result, String(payload?.signal), maxBytes)
    case "terminal_close":
      return Render.closeResult(result, maxBytes)
    case "terminal_list":
      return Render.listResult(result.sessions, maxBytes)
    case "task_output":
    case "task_kill":
      return Render.taskView(result, maxBytes)
    case "exec":
      return Render.execResult(result, maxBytes)
    case "process":
      return Render.processResult(result, maxBytes)
  }
}

const errorOutcome = (error: { readonly _tag: string; readonly message: string }, maxBytes: number): ToolOutcome => {
  const fields = Schema.is(Errors.TerminalError)(error)
    ? Schema.encodeSync(Errors.TerminalError)(error) as Record<string, unknown>
    : {}
  return {
    isError: true,
    structured: { ...fields, _tag: error._tag, message: error.message },
    text: Render.failure(error._tag, error.message, maxBytes, fields)
  }
}

const invalidParameters = (error: ParseResult.ParseError): Errors.InvalidInput => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  const field = issue?.path.join(".") || "arguments"
  const reason = issue?.message.startsWith("is missing") || issue?.message === "is missing"
    ? "is required"
    : issue?.message ?? "does not match the tool's schema"
  return new Errors.InvalidInput({ field, reason })
}

/**
 * Call a terminal tool by name with JSON arguments.
 *
 * @since 0.1.0
 */
export const call = (
  name: string,
  payload: unknown,
  options: { readonly maxResultBytes: number }
): Effect.Effect<ToolOutcome, never, Tool.HandlersFor<typeof TerminalToolkit.tools>> =>
  Effect.gen(function*() {
    const maxBytes = options.maxResultBytes
    if (!Object.hasOwn(TerminalToolkit.tools, name)) {
      return errorOutcome(new Errors.InvalidInput({ field: "name", reason: `no tool named ${name}` }), maxBytes)
    }
    const toolName = name as ToolName
    const tool = TerminalToolkit.tools[toolName]
    const decoded = Schema.decodeUnknownEither(tool.parametersSchema as Schema.Schema<any, any>)(payload ?? {})
    if (Either.isLeft(decoded)) return errorOutcome(invalidParameters(decoded.left), maxBytes)
    const toolkit = yield* TerminalToolkit
    return yield* toolkit.handle(toolName, (payload ?? {}) as any).pipe(
      Effect.map(({ encodedResult }): ToolOutcome => ({
        isError: false,
        structured: encodedResult as Record<string, unknown>,
        text: render(toolName, payload, encodedResult, maxBytes)
      })),
      Effect.catchAll((error: any) =>
        Effect.succeed(errorOutcome(
          typeof error?._tag === "string" ? error : { _tag: "InternalError", message: String(error) },
          maxBytes
        ))
      ),
      Effect.catchAllCause((cause) => {
        // A defect that is a tagged error (the daemon's `DaemonUnavailable` when its connection is gone) is
        // shown as that error, without a stack trace; anything else is an internal error, in full.
        const defect = Cause.squash(cause) as { readonly _tag?: unknown; readonly message?: unknown } | undefined
        return Effect.succeed(errorOutcome(
          typeof defect?._tag === "string" && typeof defect.message === "string" && !Cause.isInterruptedOnly(cause)
            ? { _tag: defect._tag, message: defect.message }
            : { _tag: "InternalError", message: Cause.pretty(cause) },
          maxBytes
        ))
      })
    )
  })
