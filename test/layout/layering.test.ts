import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/**
 * The layering of the workspace: which packages each package's `src/` may import. Upward and sideways imports
 * are errors; an edge among the middle packages exists only where it is written here.
 *
 *   terminal → core → node, tools → daemon (on node), server (on tools) → fleet (on daemon) → apps
 */
const allowed: Record<string, ReadonlyArray<string>> = {
  "packages/terminal": [],
  "packages/core": ["terminal"],
  "packages/node": ["terminal", "core"],
  "packages/tools": ["terminal", "core"],
  "packages/daemon": ["terminal", "core", "node"],
  "packages/server": ["terminal", "core", "tools"],
  "packages/fleet": ["core", "daemon"],
  "apps/cli": ["terminal", "core", "node", "tools", "server", "daemon", "fleet"],
  "apps/bench": ["terminal", "core", "node", "tools", "server", "daemon", "fleet"]
}

const root = fileURLToPath(new URL("../..", import.meta.url))

const sources = (directory: string): Array<string> =>
  fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name)
    if (entry.isDirectory()) return sources(full)
    return /\.(ts|mts|js|mjs)$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [full] : []
  })

/** The text of a module without its comments (a JSDoc example's `import` is not an import). */
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "")

/** Every module specifier a file imports: static, `export … from`, side-effect and dynamic `import()`. */
export const specifiers = (text: string): Array<string> => {
  const body = code(text)
  const found: Array<string> = []
  for (const pattern of [/\bfrom\s*"([^"]+)"/g, /\bimport\s*"([^"]+)"/g, /\bimport\(\s*"([^"]+)"\s*\)/g]) {
    for (const match of body.matchAll(pattern)) found.push(match[1]!)
  }
  return found
}

interface Violation {
  readonly file: string
  readonly imports: string
  readonly why: string
}

/** What is wrong with `specifier` imported by `file` of the package at `pkg` (undefined: nothing). */
export const check = (pkg: string, file: string, specifier: string): string | undefined => {
  const workspace = /^@agent-terminal\/([a-z-]+)(\/.*)?$/.exec(specifier)
  if (workspace !== null) {
    const [, name, rest] = workspace
    if (rest !== undefined && /(^|\/)internal(\/|$)/.test(rest)) return "another package's internal/"
    if (`packages/${name}` === pkg) return "its own package through the package name"
    return allowed[pkg]!.includes(name!) ? undefined : `${name} is not below ${pkg}`
  }
  if (specifier.startsWith(".")) {
    const target = path.resolve(path.dirname(file), specifier)
    return target.startsWith(path.join(root, pkg) + path.sep) ? undefined : "a relative path out of its package"
  }
  return undefined
}

const violations = (): Array<Violation> =>
  Object.keys(allowed).flatMap((pkg) => {
    const src = path.join(root, pkg, "src")
    if (!fs.existsSync(src)) return []
    return sources(src).flatMap((file) =>
      specifiers(fs.readFileSync(file, "utf8")).flatMap((specifier) => {
        const why = check(pkg, file, specifier)
        return why === undefined ? [] : [{ file: path.relative(root, file), imports: specifier, why }]
      })
    )
  })

describe("the packages' layering", () => {
  it("knows every package of the workspace", () => {
    const present = ["packages", "apps"].flatMap((group) =>
      fs.readdirSync(path.join(root, group), { withFileTypes: true })
        .filter((entry) => entry.isDirectory() && fs.existsSync(path.join(root, group, entry.name, "package.json")))
        .map((entry) => `${group}/${entry.name}`)
    )
    expect(present.sort()).toEqual(Object.keys(allowed).filter((pkg) => present.includes(pkg)).sort())
    expect(present).toContain("packages/server")
  })

  it("has no upward or sideways import, and no import of another package's internal/", () => {
    expect(violations()).toEqual([])
  })

  it("declares in package.json every workspace package a source imports", () => {
    const undeclared = Object.keys(allowed).flatMap((pkg) => {
      const manifest = path.join(root, pkg, "package.json")
      if (!fs.existsSync(manifest)) return []
      const dependencies = Object.keys(JSON.parse(fs.readFileSync(manifest, "utf8")).dependencies ?? {})
      return sources(path.join(root, pkg, "src")).flatMap((file) =>
        specifiers(fs.readFileSync(file, "utf8"))
          .map((specifier) => /^(@agent-terminal\/[a-z-]+)/.exec(specifier)?.[1])
          .filter((name): name is string => name !== undefined && !dependencies.includes(name))
          .map((name) => `${path.relative(root, file)} imports ${name}`)
      )
    })
    expect([...new Set(undeclared)]).toEqual([])
  })

  it("catches the imports it forbids", () => {
    const file = path.join(root, "packages/core/src/Example.ts")
    expect(specifiers(`/** import { X } from "@agent-terminal/tools" */\nimport { Y } from "@agent-terminal/terminal"`))
      .toEqual(["@agent-terminal/terminal"])
    expect(specifiers(`export * from "./a.js"\nimport "./b.js"\nconst c = import("@agent-terminal/node")`))
      .toEqual(["./a.js", "./b.js", "@agent-terminal/node"])
    expect(check("packages/core", file, "@agent-terminal/terminal")).toBeUndefined()
    expect(check("packages/core", file, "@agent-terminal/node")).toMatch(/not below/)
    expect(check("packages/tools", file, "@agent-terminal/server")).toMatch(/not below/)
    expect(check("packages/server", file, "@agent-terminal/daemon")).toMatch(/not below/)
    expect(check("packages/server", file, "@agent-terminal/tools/internal/contract")).toMatch(/internal/)
    expect(check("packages/core", file, "../../node/src/NodeTerminal.js")).toMatch(/out of its package/)
    expect(check("packages/core", file, "./internal/service.js")).toBeUndefined()
  })
})
