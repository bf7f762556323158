/**
 * Requests checked against their Schemas at the boundary: a field that is missing, malformed, out of
 * range, or not a field at all is `InvalidInput` naming it. The reason says what is expected and never
 * repeats the value given (an 8 MiB string in the wrong place must not come back as an 8 MiB error), and
 * a field name is cut to a short prefix.
 *
 * @since 0.2.0
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import { InvalidInput } from "./Errors.js"

/**
 * The longest field name or reason an `InvalidInput` from here carries.
 *
 * @since 0.2.0
 */
export const maxFieldLength = 64

const maxReasonLength = 240

/**
 * `text` cut to at most `max` characters (an ellipsis marks the cut), on a code point boundary.
 *
 * @since 0.2.0
 */
export const shortPrefix = (text: string, max: number = maxFieldLength): string => {
  if (text.length <= max) return text
  let end = max - 1
  const code = text.charCodeAt(end - 1)
  if (code >= 0xd800 && code <= 0xdbff) end--
  return `${text.slice(0, end)}…`
}

const messageOf = (ast: AST.AST, issue: ParseResult.ParseIssue): string | undefined =>
  Option.match(AST.getMessageAnnotation(ast), {
    onNone: () => undefined,
    onSome: (annotation) => {
      const message = annotation(issue)
      if (typeof message === "string") return message
      if (typeof message === "object" && message !== null && "message" in message) {
        return typeof message.message === "string" ? message.message : undefined
      }
      return undefined
    }
  })

const literalText = (literal: AST.LiteralValue): string =>
  typeof literal === "string" ? JSON.stringify(literal) : String(literal)

/** What a schema expects, in words, from its shape (never from the value given). */
const expected = (ast: AST.AST): string => {
  const described = AST.getDescriptionAnnotation(ast)
  switch (ast._tag) {
    case "StringKeyword":
      return "a string"
    case "NumberKeyword":
      return "a number"
    case "BooleanKeyword":
      return "a boolean"
    case "Literal":
      return literalText(ast.literal)
    case "TypeLiteral":
      return "an object"
    case "TupleType":
      return "an array"
    case "Union": {
      // an optional field's schema is `X | undefined`: what is expected is X
      const types = ast.types.filter((type) => !AST.isUndefinedKeyword(type))
      const literals = types.filter(AST.isLiteral)
      if (literals.length === types.length) {
        return literals.length === 1
          ? literalText(literals[0]!.literal)
          : `one of ${literals.map((type) => literalText(type.literal)).join(", ")}`
      }
      return types.map(expected).join(" or ")
    }
    case "Refinement":
      return Option.getOrElse(described, () => expected(ast.from))
    case "Transformation":
      return expected(ast.to)
    default:
      return Option.getOrElse(described, () => String(ast))
  }
}

interface Described {
  readonly path: ReadonlyArray<PropertyKey>
  readonly reason: string
  readonly unexpected: boolean
}

const describe = (issue: ParseResult.ParseIssue, path: ReadonlyArray<PropertyKey>): Described => {
  switch (issue._tag) {
    case "Pointer":
      return describe(issue.issue, [...path, ...(Array.isArray(issue.path) ? issue.path : [issue.path])])
    case "Missing":
      return { path, reason: "is required", unexpected: false }
    case "Unexpected":
      return { path, reason: "is not a known field", unexpected: true }
    case "Forbidden":
      return { path, reason: "could not be checked", unexpected: false }
    case "Refinement": {
      const message = messageOf(issue.ast, issue)
      if (issue.kind === "From") {
        // a failure inside (an element of an array) is the inner one's; at the same place, the outer
        // message says the whole rule (an integer from 20 to 1000, not only an integer)
        const inner = describe(issue.issue, path)
        return inner.path.length > path.length || message === undefined
          ? inner
          : { path, reason: message, unexpected: false }
      }
      return { path, reason: message ?? `must be ${expected(issue.ast)}`, unexpected: false }
    }
    case "Transformation": {
      const message = messageOf(issue.ast, issue)
      return message !== undefined ? { path, reason: message, unexpected: false } : describe(issue.issue, path)
    }
    case "Type":
      // a field the schema has no room for at all (a record of `never`: a tool without parameters)
      if (AST.isNeverKeyword(issue.ast)) return { path, reason: "is not a known field", unexpected: true }
      return { path, reason: messageOf(issue.ast, issue) ?? `must be ${expected(issue.ast)}`, unexpected: false }
    case "Composite": {
      const message = messageOf(issue.ast, issue)
      if (message !== undefined) return { path, reason: message, unexpected: false }
      const issues = Array.isArray(issue.issues) ? issue.issues : [issue.issues as ParseResult.ParseIssue]
      // a value that matches no member of a union: say what the union takes, not the first member's complaint
      if (AST.isUnion(issue.ast) && issues.every((inner) => inner._tag === "Type")) {
        return { path, reason: `must be ${expected(issue.ast)}`, unexpected: false }
      }
      return describe(issues[0]!, path)
    }
  }
}

/**
 * Options of the conversion of a parse failure.
 *
 * @since 0.2.0
 */
export interface Options {
  /** The field name when the failure is about the whole input (default `"arguments"`). */
  readonly root?: string | undefined
  /** The reason given for a field that is not one (default: `is not a known field`). */
  readonly unexpected?: ((field: string) => string) | undefined
}

/**
 * The `InvalidInput` for a parse failure: the first problem's field (its path, cut to a short prefix)
 * and what the schema expects there.
 *
 * @since 0.2.0
 */
export const invalidInput = (issue: ParseResult.ParseIssue, options: Options = {}): InvalidInput => {
  const described = describe(issue, [])
  const field = shortPrefix(described.path.map(String).join(".") || (options.root ?? "arguments"))
  const reason = described.unexpected && options.unexpected !== undefined
    ? options.unexpected(field)
    : described.reason
  return new InvalidInput({ field, reason: shortPrefix(reason, maxReasonLength) })
}

/**
 * A decoder for requests: unknown fields are refused like malformed ones, and every failure is an
 * `InvalidInput` from `invalidInput`.
 *
 * @since 0.2.0
 */
export const decoder = <A, I>(
  schema: Schema.Schema<A, I, never>,
  options: Options = {}
): (input: unknown) => Either.Either<A, InvalidInput> => {
  const decode = Schema.decodeUnknownEither(schema, { onExcessProperty: "error" })
  return (input) => Either.mapLeft(decode(input), (error) => invalidInput(error.issue, options))
}
