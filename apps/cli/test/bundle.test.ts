/**
 * What `agent-terminal --help` and the parse of any command line load: the chunks the program, `dist/main.js`
 * (started by the binary, `dist/bin.js`), imports statically, read from the build's module graph
 * (`build/bundle-meta.json`, written by `pnpm build`). Only the CLI library, `effect` and the option
 * declarations: every command's work is behind an `import()`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"

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
