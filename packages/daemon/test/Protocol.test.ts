import { Exec, type Operation, PtyService, TaskRuntime } from "@agent-terminal/core"
import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Protocol } from "../src/index.js"

const docs = fs.readFileSync(
  path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "docs", "protocol.md"),
  "utf8"
)

const declared: ReadonlyArray<Operation.Any> = [
  ...Object.values(PtyService.operations),
  ...Object.values(TaskRuntime.operations),
  ...Object.values(Exec.operations)
]

/** The members of a union (a single schema is its own member). */
const members = (schema: Schema.Schema.All): ReadonlyArray<AST.AST> =>
  AST.isUnion(schema.ast) ? schema.ast.types : [schema.ast]

describe("the protocol is derived from core's declarations", () => {
  it("has one RPC per declaration, with the declaration's very Schemas", () => {
    const requests = Protocol.DaemonRpcs.requests
    expect([...requests.keys()].sort()).toEqual(
      ["Hello", "Watch", "TaskCompletions", ...declared.map((operation) => operation.tag)].sort()
    )
    for (const operation of declared) {
      const rpc = requests.get(operation.tag)!
      // the success and the payload's fields are the core objects, not copies
      expect(rpc.successSchema, operation.tag).toBe(operation.success)
      const fields = (rpc.payloadSchema as Schema.Struct<Schema.Struct.Fields>).fields
      expect(Object.keys(fields), operation.tag).toEqual(operation.args.map((argument) => argument.name))
      for (const argument of operation.args) {
        const field = fields[argument.name]!
        const schema = argument.optional ? (field as Schema.optional<Schema.Schema.Any>).from : field
        expect(schema, `${operation.tag}.${argument.name}`).toBe(argument.schema)
      }
      // the errors: the declared ones, then HandshakeRequired
      const errors = members(rpc.errorSchema)
      const expected = [Protocol.HandshakeRequired.ast, ...operation.errors.map((error) => error.ast)]
      expect(errors.length, operation.tag).toBe(expected.length)
      errors.forEach((error, index) => expect(error, `${operation.tag} error ${index}`).toBe(expected[index]))
    }
    expect(requests.get("Cancel")!.successSchema).toBe(PtyService.CancelResult)
    expect(requests.get("TaskOutput")!.successSchema).toBe(TaskRuntime.TaskView)
  })

  it("docs/protocol.md lists every RPC with its payload's fields", () => {
    for (const operation of [...declared, PtyService.streams.watch]) {
      const row = docs.split("\n").find((line) => line.startsWith(`| \`${operation.tag}\` |`))
      expect(row, operation.tag).toBeDefined()
      const payload = row!.split("|")[2]!
      for (const argument of operation.args) {
        expect(payload, `${operation.tag}.${argument.name}`).toContain(
          `\`${argument.name}${argument.optional ? "?" : ""}`
        )
      }
      if (operation.args.length === 0) expect(payload.trim(), operation.tag).toBe("—")
    }
    expect(docs).toContain(`\`PROTOCOL_VERSION\` is **${Protocol.PROTOCOL_VERSION}**`)
  })
})
