/**
 * A CommonJS chunk's exports (scripts/bundle.mjs `exportsAsValues`): the ES chunk's closing `export { … }` becomes
 * one object of values, read once the chunk has run, for every binding nothing assigns again; a binding written
 * anywhere after its declaration, one declared twice, and an imported binding passed on keep a getter, so what an
 * importer reads stays what the ES module's live binding would give.
 */
import { describe, expect, it } from "@effect/vitest"
import * as path from "node:path"
import { pathToFileURL } from "node:url"

type ExportsAsValues = (text: string, file: string) => string

const bundleScript = pathToFileURL(path.resolve(__dirname, "../../../scripts/bundle.mjs")).href
const load = async () => ((await import(bundleScript)) as { readonly exportsAsValues: ExportsAsValues }).exportsAsValues

/** The rewritten chunk run as CommonJS (no imports in it): its `module.exports`. */
const run = (text: string): Record<string, unknown> => {
  const module = { exports: {} as Record<string, unknown> }
  new Function("module", text)(module)
  return module.exports
}

const chunk = [
  `var fixed = 1, unset`,
  `let counter = 0`,
  `const bump = () => { counter++ }`,
  `function setLater(v) { unset = v }`,
  `class Shape {}`,
  `var twice = 1; var twice = 2`,
  `let shadowed = 3; function inner() { let shadowed = 4; shadowed = 5; return shadowed }`,
  `let parts; [parts] = [["a"]]`,
  `let keyed; for (keyed in { k: 1 });`,
  `export { fixed, unset, counter, bump, setLater, Shape, twice as renamed, shadowed, inner, parts, keyed }`
].join("\n")

const descriptors = (exports: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(Object.getOwnPropertyDescriptors(exports)).map(([key, d]) => [key, d.get ? "getter" : "value"])
  )

describe("a CommonJS chunk's exports", () => {
  it("are values where nothing assigns the binding again, getters where something does", async () => {
    const exportsAsValues = await load()
    const exports = run(exportsAsValues(chunk, "chunk-test.js"))
    expect(descriptors(exports)).toEqual({
      fixed: "value",
      unset: "getter",
      counter: "getter",
      bump: "value",
      setLater: "value",
      Shape: "value",
      renamed: "getter",
      shadowed: "getter",
      inner: "value",
      parts: "getter",
      keyed: "getter",
      __esModule: "value"
    })
    expect(Object.getOwnPropertyDescriptor(exports, "__esModule")).toMatchObject({ value: true, enumerable: false })
    expect([exports.fixed, exports.renamed, exports.shadowed, exports.parts, exports.keyed]).toEqual([
      1,
      2,
      3,
      ["a"],
      "k"
    ])
  })

  it("a getter stays live: what the chunk writes later is what an importer reads", async () => {
    const exportsAsValues = await load()
    const exports = run(exportsAsValues(chunk, "chunk-test.js")) as Record<string, any>
    exports.bump()
    exports.bump()
    exports.setLater("now")
    expect([exports.counter, exports.unset]).toEqual([2, "now"])
  })

  it("an imported binding passed on keeps a getter; a chunk without exports is left as it is", async () => {
    const exportsAsValues = await load()
    const text = `import { shared } from "./chunk-other.js"\nconst own = 1\nexport { shared, own }`
    const rewritten = exportsAsValues(text, "chunk-test.js")
    expect(rewritten).toContain(`get "shared"(){return shared}`)
    expect(rewritten).toContain(`"own":own`)
    expect(rewritten).not.toContain("export {")
    const none = `import "./chunk-other.js"\nglobalThis.x = 1`
    expect(exportsAsValues(none, "main.js")).toBe(none)
  })
})
