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

interface Field {
  readonly name: string
  readonly index: number
  readonly optional: boolean
  readonly plain: Plain | undefined
}

const struct = (ast: AST.TypeLiteral): Plain | undefined => {
  if (ast.indexSignatures.length > 0) return undefined
  const fields: Array<Field> = []
  for (const property of ast.propertySignatures) {
    if (typeof property.name !== "string") return undefined
    fields.push({
      name: property.name,
      index: fields.length,
      optional: property.isOptional,
      plain: compile(property.type)
    })
  }
  const byName = new Map(fields.map((field) => [field.name, field]))
  const required = fields.filter((field) => !field.optional).length
  const copy = (field: Field | undefined, value: unknown): unknown =>
    field?.plain === undefined ? miss : field.plain(value)
  // the schema's order, whatever the value's
  const ordered = (value: Record<string, unknown>): unknown => {
    const output: Record<string, unknown> = {}
    for (const field of fields) {
      if (!Object.hasOwn(value, field.name)) continue
      const encoded = copy(field, value[field.name])
      if (encoded === miss) return miss
      output[field.name] = encoded
    }
    return output
  }
  // walks the value's own keys (a few) rather than the schema's (a send's result has twenty); a value whose
  // keys come in the schema's order is copied in its own order, any other in the schema's
  return (value) => {
    if (!isPlainObject(value)) return miss
    const output: Record<string, unknown> = {}
    let last = -1
    let requiredSeen = 0
    let inOrder = true
    for (const key in value) {
      const field = byName.get(key)
      if (field === undefined) return miss
      if (field.index < last) inOrder = false
      last = field.index
      if (!field.optional) requiredSeen++
      if (inOrder) {
        const encoded = copy(field, value[key])
        if (encoded === miss) return miss
        output[key] = encoded
      }
    }
    if (requiredSeen !== required) return miss
    return inOrder ? output : ordered(value)
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
