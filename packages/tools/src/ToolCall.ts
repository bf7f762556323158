/**
 * One call path for every transport: find the tool, validate its parameters (a bad or unknown one is an
 * `InvalidInput` naming the field, never echoing the value), run its handler as the calling owner, and
 * render the outcome — the structured result (or error with its `_tag` and `message`) and the bounded text
 * a model reads. A failure's text and structured content together stay within `maxResultBytes`.
 *
 * The path is compiled once (`make`) from our own tables: each tool of the deployment (its `@effect/ai`
 * schemas), its handler (`Handlers`, one per tool) and its rendering (`Render.renderings`); the decoder and the encoder are built
 * when the caller is made, not on every call.
 *
 * @since 0.1.0
 */
import { Errors, type Ids, Session, Validation } from "@agent-terminal/core"
import { Utf8 } from "@agent-terminal/terminal"
import type { Tool } from "@effect/ai"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import * as Deployment from "./Deployment.js"
import * as Handlers from "./Handlers.js"
import * as Contract from "./internal/contract.js"
import * as Hints from "./internal/hints.js"
import * as PlainEncode from "./internal/plainEncode.js"
import * as Render from "./Render.js"

/**
 * What a tool call produced, ready for any transport.
 *
 * @since 0.1.0
 */
export interface ToolOutcome {
  readonly isError: boolean
  /**
   * The result's facts as JSON, without the body its text holds (`internal/contract.ts`: the output is sent
   * once), or the error's fields with `_tag` and `message`.
   */
  readonly structured: Record<string, unknown>
  /** The rendered text, within `maxResultBytes` (a failure's text and `structured` together). */
  readonly text: string
}

/**
 * The names of the tools.
 *
 * @since 0.1.0
 */
export type ToolName = Render.ToolName

/**
 * A call path over the handlers it was made with.
 *
 * @since 0.2.0
 */
export interface Caller {
  /**
   * Call a tool by name with JSON arguments, as `owner` (the transport's: a connection's, an MCP session's, a
   * client's); never fails (a failure is an outcome with `isError`).
   */
  readonly call: (owner: Ids.OwnerId, name: string, payload: unknown) => Effect.Effect<ToolOutcome>
}

const isTerminalError = Schema.is(Errors.TerminalError)
const encodeTerminalError = Schema.encodeSync(Errors.TerminalError)

/** The longest string an error's structured fields carry (ids and names are shorter by their bounds). */
const maxFieldChars = 256
const jsonBytes = (value: unknown) => Utf8.byteLength(JSON.stringify(value))

const capFields = (fields: Record<string, unknown>, maxChars: number): Record<string, unknown> => {
  const capped: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(fields)) {
    if (typeof value === "string") capped[key] = Validation.shortPrefix(value, maxChars)
    else if (Array.isArray(value) && value.length > 16) capped[key] = value.slice(0, 16)
    else capped[key] = value
  }
  return capped
}

/**
 * A failure's outcome: the text keeps the tag and the ids first; the structured content is the error's
 * fields (strings cut to a short prefix) with `_tag` and `message`, made smaller — without the message,
 * with shorter fields, only the tag, nothing — until text and structured content fit `maxBytes` together.
 *
 * @since 0.2.0
 */
export const failureOutcome = (
  error: { readonly _tag: string; readonly message: string },
  maxBytes: number
): ToolOutcome => {
  const fields = isTerminalError(error)
    ? capFields(encodeTerminalError(error) as Record<string, unknown>, maxFieldChars)
    : {}
  const message = Validation.shortPrefix(Hints.messageOf(error), 4 * maxFieldChars)
  const compact = Render.failure(error._tag, "", maxBytes, fields)
  const candidates: ReadonlyArray<Record<string, unknown>> = [
    { ...fields, _tag: error._tag, message },
    { ...fields, _tag: error._tag },
    { ...capFields(fields, 24), _tag: error._tag },
    { _tag: error._tag },
    {}
  ]
  const room = maxBytes - Utf8.byteLength(compact)
  // nothing fits beside the text (a bound of a few dozen bytes): the result then has no structured content
  const structured = candidates.find((candidate) => jsonBytes(candidate) <= room) ?? {}
  return {
    isError: true,
    structured,
    text: Render.failure(error._tag, message, Math.max(0, maxBytes - jsonBytes(structured)), fields)
  }
}

/**
 * A defect that is a tagged error (the daemon's `DaemonUnavailable` when its connection is gone) is shown as
 * that error, without a stack trace; anything else is an internal error, in full.
 */
const defectOutcome = (cause: Cause.Cause<unknown>, maxBytes: number) => {
  const defect = Cause.squash(cause) as { readonly _tag?: unknown; readonly message?: unknown } | undefined
  return failureOutcome(
    typeof defect?._tag === "string" && typeof defect.message === "string"
      ? { _tag: defect._tag, message: defect.message }
      : { _tag: "InternalError", message: Cause.pretty(cause) },
    maxBytes
  )
}

interface Compiled {
  readonly decode: (payload: unknown) => Either.Either<unknown, Errors.InvalidInput>
  readonly run: (owner: Ids.OwnerId, params: unknown) => Effect.Effect<unknown, unknown>
  readonly encode: (result: unknown) => Either.Either<unknown, unknown>
  readonly render: (payload: unknown, result: unknown, maxBytes: number) => string
}

const parameterNames = (tool: Tool.Any): ReadonlyArray<string> =>
  AST.getPropertySignatures(tool.parametersSchema.ast).map((property) => String(property.name))

/**
 * `terminal_send` of a `text` (and a `sessionId`) and nothing else — nearly every call — is valid by the
 * tool's own parameters when the text is a string and the id one the id schema takes: its Schema decode
 * (a struct of eleven optional fields walked, a new object built) is skipped, and the arguments are the
 * parameters as they came. Anything else, valid or not, takes the full decode. Sound while `text` is a plain
 * optional string and no rule ties the two fields (a test holds the schema to that).
 */
const plainSend = (decode: Compiled["decode"]): Compiled["decode"] => {
  const isId = Schema.is(Session.IdString)
  return (payload) => {
    if (typeof payload === "object" && payload !== null && Object.getPrototypeOf(payload) === Object.prototype) {
      const { sessionId, text } = payload as { readonly sessionId?: unknown; readonly text?: unknown }
      let fields = 0
      // a plain object's keys are its own (counted without the array `Object.keys` builds)
      for (const _ in payload) fields++
      if (
        typeof text === "string" &&
        (sessionId === undefined ? fields === 1 : fields === 2 && typeof sessionId === "string" && isId(sessionId))
      ) return Either.right(payload)
    }
    return decode(payload)
  }
}

/** A tool of the deployment (its schemas), with its handler and its rendering from our tables. */
const compile = (tool: Tool.Any, handlers: Handlers.ToolHandlers): Compiled => {
  const name = tool.name as ToolName
  const names = parameterNames(tool)
  const list = names.length === 0 ? "it takes none" : `its parameters: ${names.join(", ")}`
  const decode = Validation.decoder(tool.parametersSchema as Schema.Schema<unknown, unknown>, {
    root: "arguments",
    unexpected: () => `is not a parameter of ${tool.name} (${list})`
  })
  return {
    decode: name === "terminal_send" ? plainSend(decode) : decode,
    run: handlers[name] as (owner: Ids.OwnerId, params: unknown) => Effect.Effect<unknown, unknown>,
    encode: PlainEncode.withPlainPath(
      tool.successSchema,
      Schema.encodeUnknownEither(tool.successSchema as Schema.Schema<unknown, unknown>)
    ),
    render: Render.renderings[name]
  }
}

/**
 * The call path over the tool handlers in context, compiled once.
 *
 * @since 0.2.0
 */
export const make = (
  options: { readonly maxResultBytes: number; readonly deployment?: Deployment.Deployment | undefined }
): Effect.Effect<Caller, never, Handlers.Handlers> =>
  Effect.map(Handlers.Handlers, (handlers) => {
    const maxBytes = options.maxResultBytes
    const compiled = new Map<string, Compiled>()
    const tools = Deployment.toolsOf(options.deployment)
    for (const tool of tools) compiled.set(tool.name, compile(tool, handlers))
    const names = tools.map((tool) => tool.name).join(", ")
    const call = (owner: Ids.OwnerId, name: string, payload: unknown): Effect.Effect<ToolOutcome> => {
      const tool = compiled.get(name)
      if (tool === undefined) {
        const field = Validation.shortPrefix(name)
        return Effect.succeed(failureOutcome(
          new Errors.InvalidInput({ field: "name", reason: `no tool named ${field} (tools: ${names})` }),
          maxBytes
        ))
      }
      const params = tool.decode(payload ?? {})
      if (Either.isLeft(params)) return Effect.succeed(failureOutcome(params.left, maxBytes))
      return tool.run(owner, params.right).pipe(
        Effect.matchCauseEffect({
          onFailure: (cause) => {
            const failure = Cause.failureOption(cause)
            if (failure._tag === "Some") {
              const error = failure.value as { readonly _tag?: unknown; readonly message?: unknown }
              return Effect.succeed(failureOutcome(
                typeof error?._tag === "string"
                  ? error as { readonly _tag: string; readonly message: string }
                  : { _tag: "InternalError", message: String(error) },
                maxBytes
              ))
            }
            return Cause.isInterruptedOnly(cause) ?
              Effect.failCause(cause as Cause.Cause<never>) :
              Effect.succeed(defectOutcome(cause, maxBytes))
          },
          onSuccess: (result) => {
            const encoded = tool.encode(result)
            if (Either.isLeft(encoded)) {
              return Effect.succeed(defectOutcome(Cause.die(encoded.left), maxBytes))
            }
            const text = tool.render(params.right, encoded.right, maxBytes)
            return Effect.succeed<ToolOutcome>({
              isError: false,
              structured: Contract.structuredOf(name, encoded.right as Record<string, unknown>, text),
              text
            })
          }
        })
      )
    }
    return { call }
  })

/**
 * Call a terminal tool by name with JSON arguments (compiles the call path each time: a transport that
 * makes many calls keeps a `make` caller instead).
 *
 * @since 0.1.0
 */
export const call = (
  owner: Ids.OwnerId,
  name: string,
  payload: unknown,
  options: { readonly maxResultBytes: number; readonly deployment?: Deployment.Deployment | undefined }
): Effect.Effect<ToolOutcome, never, Handlers.Handlers> =>
  Effect.flatMap(make(options), (caller) => caller.call(owner, name, payload))
