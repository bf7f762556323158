/**
 * What the tools cost a model, decided in one place: the JSON Schemas it reads on every turn, and the
 * structured half of each result.
 *
 * - Input schemas: Effect's JSON Schema of each tool's parameters, without what Schema generates from its
 *   filters (`"title": "maxLength(64)"`, `"description": "a string at most 32 character(s) long"`), without
 *   `"required": []`, and with a subschema that a tool repeats (`waitFor` in a send and in each step) given
 *   once under `$defs`.
 * - Results: the output a tool returns is sent once, as the text; `structuredContent` carries the facts
 *   (`waitReason`, `exitCode`, ids, counts) without the body fields the text holds (`bodyFields`), and each
 *   tool's `outputSchema` declares exactly that shape — or an error's (`_tag`, `message`, its fields).
 */
import type { Tool } from "@effect/ai"
import * as JsonSchema from "effect/JSONSchema"
import type * as Schema from "effect/Schema"
import * as Render from "../Render.js"

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/** A description Schema writes for a filter by itself ("a string at most 32 character(s) long", "an integer"). */
const generated = (description: unknown): boolean =>
  typeof description === "string" && (/^an? [a-z0-9]/.test(description) || /^[A-Za-z]+</.test(description))

/**
 * Bounds no model reaches by accident — a day of milliseconds, a kilobyte of pattern, a thousand keys — are
 * enforced by the service (`InvalidInput` names the field and the bound), not repeated on every turn.
 */
const unreachable = (key: string, value: unknown): boolean =>
  typeof value === "number" &&
  ((key === "maximum" && value >= 86_400_000) || ((key === "maxLength" || key === "maxItems") && value >= 1024))

/**
 * A JSON Schema without the noise Schema generates: every `title` (no tool's schema sets one), generated
 * descriptions, `"required": []`, `additionalProperties: false` below the top (the service refuses an
 * unknown field anyway, naming it), and the `unreachable` bounds.
 */
export const clean = (schema: unknown, top = true): unknown => {
  if (Array.isArray(schema)) return schema.map((item) => clean(item, false))
  if (!isObject(schema)) return schema
  const out: Json = {}
  for (const [key, value] of Object.entries(schema)) {
    if (key === "title") continue
    if (key === "description" && generated(value)) continue
    if (key === "required" && Array.isArray(value) && value.length === 0) continue
    if (key === "additionalProperties" && value === false && !top) continue
    if (unreachable(key, value)) continue
    if (key === "properties" && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, property]) => [name, clean(property, false)]))
      continue
    }
    out[key] = clean(value, false)
  }
  return out
}

/** The smallest subschema worth sharing (smaller ones cost less inline than as a reference). */
const MIN_SHARED_BYTES = 160

const withoutDescription = (schema: Json): Json => {
  const { description: _, ...rest } = schema
  return rest
}

/**
 * A schema whose repeated subschemas (compared without their descriptions) are given once, under
 * `$defs` named for the property they first appear as; each place keeps its own description next to the
 * `$ref`.
 */
export const share = (schema: Json): Json => {
  const seen = new Map<string, { readonly name: string; count: number }>()
  const visit = (node: unknown, name: string | undefined) => {
    if (Array.isArray(node)) return node.forEach((item) => visit(item, name))
    if (!isObject(node)) return
    if (name !== undefined && node.type === "object") {
      const key = JSON.stringify(withoutDescription(node))
      if (key.length >= MIN_SHARED_BYTES) {
        const known = seen.get(key)
        if (known === undefined) seen.set(key, { name, count: 1 })
        else known.count++
      }
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === "properties" && isObject(value)) {
        for (const [property, sub] of Object.entries(value)) visit(sub, property)
      } else visit(value, undefined)
    }
  }
  visit(schema, undefined)
  const shared = new Map([...seen].filter(([, entry]) => entry.count > 1).map(([key, entry]) => [key, entry.name]))
  if (shared.size === 0) return schema
  const defs: Json = {}
  const replace = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(replace)
    if (!isObject(node)) return node
    const name = node.type === "object" ? shared.get(JSON.stringify(withoutDescription(node))) : undefined
    if (name !== undefined) {
      defs[name] ??= Object.fromEntries(
        Object.entries(withoutDescription(node)).map(([key, value]) => [key, replace(value)])
      )
      return node.description === undefined
        ? { $ref: `#/$defs/${name}` }
        : { $ref: `#/$defs/${name}`, description: node.description }
    }
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, replace(value)]))
  }
  const replaced = replace(schema) as Json
  const existing = isObject(replaced.$defs) ? replaced.$defs : {}
  return { ...replaced, $defs: { ...existing, ...defs } }
}

/** The JSON Schema of a Schema, its definitions inline under `$defs`. */
const jsonSchemaOf = (schema: Schema.Schema.All): Json => {
  const $defs: Record<string, JsonSchema.JsonSchema7> = {}
  const out = JsonSchema.fromAST(schema.ast, {
    definitions: $defs,
    topLevelReferenceStrategy: "skip"
  }) as unknown as Json
  return Object.keys($defs).length === 0 ? out : { ...out, $defs }
}

/**
 * The input schema a model reads for a tool.
 *
 * @since 0.4.0
 */
export const inputSchemaOf = (tool: Tool.Any): Json => {
  const schema = clean(jsonSchemaOf(tool.parametersSchema)) as Json
  const shared = share(schema)
  return shared.properties === undefined ? { ...shared, properties: {} } : shared
}

/** The fields each tool's text holds whole (`Render.bodyFields`), by name. */
const bodyFields: Readonly<Record<string, ReadonlyArray<string>>> = Render.bodyFields

/** Where a full-screen program's screen is in the text (`Render`): then `screen` is not sent again. */
const SCREEN_IN_TEXT = "[full-screen program: screen "

/**
 * The structured half of a result: the encoded result without the fields its text holds (see
 * `Render.bodyFields`); a screen stays only when the text could not hold it (cut by `maxResultBytes`).
 *
 * @since 0.4.0
 */
export const structuredOf = (name: string, encoded: Json, text: string): Json => {
  const body = bodyFields[name] ?? []
  const out: Json = {}
  // an encoded result is a plain object: its keys are its own (no array of pairs built per call)
  for (const key in encoded) {
    const value = encoded[key]
    if (body.includes(key)) continue
    if (key === "screen" && text.includes(SCREEN_IN_TEXT)) continue
    if (key === "steps" && Array.isArray(value)) {
      out[key] = value.map((step) => isObject(step) ? withoutKey(step, "output") : step)
      continue
    }
    if (key === "result" && isObject(value)) {
      out[key] = withoutKeys(value, ["output", "screen"])
      continue
    }
    out[key] = value
  }
  return out
}

const withoutKey = (value: Json, key: string): Json => withoutKeys(value, [key])
const withoutKeys = (value: Json, keys: ReadonlyArray<string>): Json =>
  Object.fromEntries(Object.entries(value).filter(([key]) => !keys.includes(key)))

/** A schema without the properties `names` (also dropped from `required`), in each branch of a union. */
const omitProperties = (schema: Json, names: ReadonlyArray<string>): Json => {
  if (Array.isArray(schema.anyOf)) {
    return { ...schema, anyOf: schema.anyOf.map((branch) => isObject(branch) ? omitProperties(branch, names) : branch) }
  }
  if (!isObject(schema.properties)) return schema
  const properties = withoutKeys(schema.properties, names)
  if (isObject(properties.steps) && isObject(properties.steps.items)) {
    properties.steps = { ...properties.steps, items: omitProperties(properties.steps.items, ["output"]) }
  }
  const required = Array.isArray(schema.required)
    ? schema.required.filter((name) => !names.includes(name as string))
    : undefined
  return { ...schema, properties, ...(required === undefined ? {} : { required }) }
}

/** A failed call's structured content: its `_tag`, its message, the error's own fields. */
const errorSchema: Json = {
  type: "object",
  required: ["_tag"],
  properties: { _tag: { type: "string" }, message: { type: "string" } }
}

/** Descriptions are for the model's input schemas; the output schema keeps its shape only. */
const withoutDescriptions = (schema: unknown): unknown => {
  if (Array.isArray(schema)) return schema.map(withoutDescriptions)
  if (!isObject(schema)) return schema
  return Object.fromEntries(
    Object.entries(schema).filter(([key]) => key !== "description").map(([key, value]) => [
      key,
      key === "properties" && isObject(value)
        ? Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, withoutDescriptions(sub)]))
        : withoutDescriptions(value)
    ])
  )
}

/**
 * A tool's `outputSchema`: the shape of its `structuredContent` — its result without the body fields, or a
 * failure's (`_tag`, `message`, the error's fields). An object at the top, as MCP requires.
 *
 * @since 0.4.0
 */
export const outputSchemaOf = (tool: Tool.Any): Json => {
  const { $defs, ...success } = withoutDescriptions(clean(jsonSchemaOf(tool.successSchema))) as Json
  const result = omitProperties(success, bodyFields[tool.name] ?? [])
  return {
    type: "object",
    anyOf: [result, errorSchema],
    ...(isObject($defs) ? { $defs } : {})
  }
}
