import * as Core from "@agent-terminal/core"
import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../..", import.meta.url))

const sources = (directory: string): Array<string> =>
  fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name)
    if (entry.isDirectory()) return sources(full)
    return entry.name.endsWith(".ts") ? [full] : []
  })

/** Every `src/` of the workspace but core's. */
const outsideCore = (): Array<string> =>
  ["packages", "apps"].flatMap((group) =>
    fs.readdirSync(path.join(root, group)).flatMap((name) => {
      const src = path.join(root, group, name, "src")
      return name === "core" || !fs.existsSync(src) ? [] : sources(src)
    })
  )

/** The names of the Schemas core exports (`Session.SendRequest`, `TaskRuntime.TaskView`, …). */
const coreSchemaNames = (): Set<string> => {
  const names = new Set<string>()
  for (const module of Object.values(Core)) {
    for (const [name, value] of Object.entries(module as Record<string, unknown>)) {
      if (Schema.isSchema(value)) names.add(name)
    }
  }
  return names
}

/** A Schema declared in a file: `const X = Schema.…`, `const X = S.…`, or `class X extends Schema.…`. */
const declared = (text: string): Array<string> => [
  ...[...text.matchAll(/^(?:export )?const (\w+)(?::[^=\n]+)? = Schema\./gm)].map((match) => match[1]!),
  ...[...text.matchAll(/^(?:export )?class (\w+) extends Schema\./gm)].map((match) => match[1]!)
]

describe("shapes once", () => {
  it("no src/ outside core declares a Schema core already declares (TaskView, CancelResult, requests, results)", () => {
    const names = coreSchemaNames()
    for (const name of ["TaskView", "CancelResult", "TaskEvent", "SendRequest", "SendResult", "ExecRequest"]) {
      expect(names.has(name), name).toBe(true)
    }
    const files = outsideCore()
    expect(files.length).toBeGreaterThan(50)
    const twice = files.flatMap((file) =>
      declared(fs.readFileSync(file, "utf8"))
        .filter((name) => names.has(name))
        .map((name) => `${path.relative(root, file)}: ${name}`)
    )
    expect(twice).toEqual([])
  })

  it("finds a Schema declared again (the scan itself)", () => {
    expect(declared("export const TaskView = Schema.Struct({})\nconst X = TaskRuntime.TaskView\n")).toEqual([
      "TaskView"
    ])
    expect(declared("export class CancelResult extends Schema.Class<CancelResult>(\"C\")({}) {}")).toEqual([
      "CancelResult"
    ])
  })
})
