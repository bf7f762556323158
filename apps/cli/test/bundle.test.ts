/**
 * What `agent-terminal --help` and the parse of any command line load: the chunks the program, `dist/main.js`
 * (started by the binary, `dist/bin.js`), imports statically, read from the build's module graph
 * (`build/bundle-meta.json`, written by `pnpm build`). Only the CLI library, `effect` and the option
 * declarations: every command's work is behind an `import()`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
// @ts-expect-error: a plain .mjs script of the repository, without types
import { oneLevelOfGetters } from "../../../scripts/bundle.mjs"

const metaFile = path.resolve(__dirname, "../build/bundle-meta.json")

interface Meta {
  readonly outputs: Record<string, {
    readonly inputs: Record<string, unknown>
    readonly imports: ReadonlyArray<{ readonly path: string; readonly kind: string; readonly external?: boolean }>
  }>
}

/** The modules of `entry` and of every chunk it imports statically, and the externals they import. */
const eager = (meta: Meta, entry: string) => {
  const seen = new Set([entry])
  const queue = [entry]
  const externals = new Set<string>()
  while (queue.length > 0) {
    for (const imported of meta.outputs[queue.shift()!]?.imports ?? []) {
      if (imported.external === true) externals.add(imported.path)
      else if (imported.kind === "import-statement" && !seen.has(imported.path)) {
        seen.add(imported.path)
        queue.push(imported.path)
      }
    }
  }
  return { modules: [...seen].flatMap((chunk) => Object.keys(meta.outputs[chunk]!.inputs)), externals: [...externals] }
}

describe.runIf(fs.existsSync(metaFile))("the bundle (pnpm build)", () => {
  it("--help loads the CLI library, effect and the options: no command's work, no native addon", () => {
    const { externals, modules } = eager(JSON.parse(fs.readFileSync(metaFile, "utf8")) as Meta, "dist/main.js")
    expect(modules.length).toBeGreaterThan(0)
    expect(modules.some((m) => m.includes("@effect/cli"))).toBe(true)
    const heavy = [
      "@xterm/",
      "@effect/rpc",
      "@effect/ai",
      "@effect/sql",
      "msgpackr",
      "packages/tools/",
      "packages/server/",
      "packages/daemon/dist/RemoteTerminal",
      "packages/node/dist/NodeTerminal",
      "packages/node/dist/Bubblewrap",
      "packages/core/dist/internal/service",
      "src/Mcp.ts",
      "src/Serve.ts",
      "apps/bench/"
    ]
    expect(modules.filter((m) => heavy.some((h) => m.includes(h)))).toEqual([])
    expect(externals.filter((e) => !e.startsWith("node:"))).toEqual([])
  })
})

describe("a CommonJS chunk's exports (scripts/bundle.mjs)", () => {
  /** A module as the bundle's rewrite makes a chunk: esbuild's CommonJS output with a linked source map. */
  const commonJs = async (source: string) => {
    const built = await esbuild.build({
      stdin: { contents: source, loader: "js", sourcefile: "chunk.mjs" },
      outfile: "chunk.js",
      write: false,
      format: "cjs",
      platform: "node",
      minifyWhitespace: true,
      minifySyntax: true,
      sourcemap: "linked",
      logLevel: "silent"
    })
    return built.outputFiles.find((file) => file.path.endsWith(".js"))!.text
  }
  const source = [
    `export let count = 0`,
    `export function bump() { count++ }`,
    `export const name = "chunk"`
  ].join("\n")

  it("exports the namespace itself: the same names, live bindings, __esModule, one getter each", async () => {
    const text = await commonJs(source)
    expect(text).toMatch(/module\.exports=__toCommonJS\(/)
    const rewritten: string = oneLevelOfGetters("chunk.js", text)
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bundle-test-"))
    try {
      fs.writeFileSync(path.join(dir, "chunk.js"), rewritten)
      const chunk = createRequire(path.join(dir, "x.js"))("./chunk.js")
      expect(Object.keys(chunk).sort()).toEqual(["bump", "count", "name"])
      expect(chunk.__esModule).toBe(true)
      expect(chunk.name).toBe("chunk")
      chunk.bump()
      expect(chunk.count).toBe(1)
      // the getter esbuild defines for the binding itself (`()=>count`), not one that reads another object's
      const getter = Object.getOwnPropertyDescriptor(chunk, "count")!.get!
      expect(String(getter)).not.toMatch(/\[/)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("keeps every line's length (the source map's columns) and the map comment last", async () => {
    const text = await commonJs(source)
    const rewritten: string = oneLevelOfGetters("chunk.js", text)
    const before = text.split("\n")
    const after = rewritten.split("\n")
    const mapLine = before.findIndex((line) => line.startsWith("//# sourceMappingURL="))
    expect(after.slice(0, mapLine).map((line) => line.length)).toEqual(
      before.slice(0, mapLine).map((line) => line.length)
    )
    expect(after.at(-2)).toBe(before.at(-2))
    expect(after.at(-1)).toBe(before.at(-1))
  })

  it("leaves a chunk that exports nothing as it is, and refuses one it does not understand", async () => {
    const nothing = await commonJs(`globalThis.ran = true`)
    expect(oneLevelOfGetters("main.js", nothing)).toBe(nothing)
    const twice = `module.exports=__toCommonJS(a);module.exports=__toCommonJS(b);\n//# sourceMappingURL=x.js.map\n`
    expect(() => oneLevelOfGetters("x.js", twice)).toThrow(/2 module.exports/)
  })
})
