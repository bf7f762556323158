/**
 * A Schema encoder's fast path for plain values: where a schema is built of strings, numbers, booleans,
 * literals, `undefined`, their unions and structs of them (no transformation, no refinement, no index
 * signature), encoding is a check and a copy in the schema's own key order. A value that is such, with no key
 * the schema does not name, is copied here; any other value (a field whose schema is not plain, an excess key,
 * a wrong type) takes the full encode, which gives the answer or the error it always gave.
 *
 * A send's result is encoded on every call: its Schema encode walks a struct of twenty fields through
 * the generic parser (~2–3 µs warm, more in the server's megamorphic state).
 */
import * as Either from "effect/Either"
import type * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"

const miss: unique symbol = Symbol("plainEncode.miss")

type Plain = (value: unknown) => unknown

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype

const struct = (ast: AST.TypeLiteral): Plain | undefined => {
  if (ast.indexSignatures.length > 0) return undefined
  const fields: Array<{ readonly name: string; readonly optional: boolean; readonly plain: Plain | undefined }> = []
  for (const property of ast.propertySignatures) {
    if (typeof property.name !== "string") return undefined
    fields.push({ name: property.name, optional: property.isOptional, plain: compile(property.type) })
  }
  const known = new Set(fields.map((field) => field.name))
  return (value) => {
    if (!isPlainObject(value)) return miss
    for (const key in value) if (!known.has(key)) return miss
    const output: Record<string, unknown> = {}
    for (const field of fields) {
      if (!Object.prototype.hasOwnProperty.call(value, field.name)) {
        if (field.optional) continue
        return miss
      }
      if (field.plain === undefined) return miss
      const encoded = field.plain(value[field.name])
      if (encoded === miss) return miss
      output[field.name] = encoded
    }
    return output
  }
}

const union = (ast: AST.Union): Plain | undefined => {
  const members: Array<Plain> = []
  for (const type of ast.types) {
    const plain = compile(type)
    if (plain === undefined) return undefined
    members.push(plain)
  }
  return (value) => {
    for (const member of members) {
      const encoded = member(value)
      if (encoded !== miss) return encoded
    }
    return miss
  }
}

const compile = (ast: AST.AST): Plain | undefined => {
  switch (ast._tag) {
    case "StringKeyword":
      return (value) => typeof value === "string" ? value : miss
    case "NumberKeyword":
      return (value) => typeof value === "number" ? value : miss
    case "BooleanKeyword":
      return (value) => typeof value === "boolean" ? value : miss
    case "UndefinedKeyword":
      return (value) => value === undefined ? value : miss
    case "Literal": {
      const literal = ast.literal
      return (value) => value === literal ? value : miss
    }
    case "Union":
      return union(ast)
    case "TypeLiteral":
      return struct(ast)
    default:
      return undefined
  }
}

/**
 * `encode` with the fast path for plain values of `schema` in front of it (`encode` alone when no part of
 * the schema is plain).
 *
 * @since 0.4.0
 */
export const withPlainPath = (
  schema: Schema.Schema.All,
  encode: (value: unknown) => Either.Either<unknown, unknown>
): (value: unknown) => Either.Either<unknown, unknown> => {
  const plain = compile(schema.ast)
  if (plain === undefined) return encode
  return (value) => {
    const encoded = plain(value)
    return encoded === miss ? encode(value) : Either.right(encoded)
  }
}
