#!/usr/bin/env node
// `pnpm build` runs this after `tsc -b`: the CLI (apps/cli) bundled with esbuild into apps/cli/dist — the
// `agent-terminal` binary and its chunks, split so that a command loads only what it runs (dynamic `import()`s:
// `serve`, the host's terminals, the live view, SQLite, the daemon's client) — and the benchmark (apps/bench, not
// published) into apps/bench/dist: its binary and the scripts it forks, one file per entry point. The workspace packages come from their `dist/` (built by tsc, with
// their source maps, which the bundle's maps chain to). Kept out of the bundle:
// - the native addons, node-pty and better-sqlite3 (and msgpackr's optional one), loaded from node_modules;
// - @effect/cli's parsers of configuration files (yaml, toml, ini): no option of ours reads such a file.
// A module of a workspace package that reads files beside itself (`import.meta.url`: the zsh integration, the
// live view's assets, the reaper) reads them from that package where it is installed.
// The module graph goes to apps/cli/build/bundle-meta.json (not published): a test reads it.
import * as esbuild from "esbuild"
import { execFile } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import ts from "typescript"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const cli = path.join(root, "apps/cli")
const bench = path.join(root, "apps/bench")

/** The program, `dist/main.js`, started by the binary `dist/bin.js` (apps/cli/launcher.cjs). */
export const entryPoints = { main: "src/bin.ts" }

/** The bench's binary and every script it forks (`Forked.fork("./X.js")`, beside it), in apps/bench/dist. */
export const benchEntryPoints = {
  bin: "src/bin.ts",
  MemoryChild: "src/MemoryChild.ts",
  InMemoryChild: "src/InMemoryChild.ts",
  DaemonClient: "src/DaemonClient.ts",
  RpcFloor: "src/RpcFloor.ts",
  PtyHolder: "src/PtyHolder.ts",
  InProcessSend: "src/InProcessSend.ts",
  IdleChild: "src/IdleChild.ts",
  FloodChild: "src/FloodChild.ts",
  FleetPeer: "src/FleetPeer.ts",
  HelpFloor: "src/HelpFloor.ts"
}

/** The native addons (and msgpackr's optional one): required from node_modules at run time. */
export const external = ["node-pty", "better-sqlite3", "msgpackr-extract"]

const packageOf = /[/\\]packages[/\\]([a-z]+)[/\\](dist[/\\].*\.js)$/

/** `import.meta.url` of a workspace package's module: where that module is in the installed package. */
const moduleUrl = {
  name: "module-url",
  setup(build) {
    build.onResolve(
      { filter: /^agent-terminal:module-url$/ },
      () => ({ path: "module-url", namespace: "agent-terminal" })
    )
    build.onLoad({ filter: /.*/, namespace: "agent-terminal" }, () => ({
      contents: [
        `import { createRequire } from "node:module"`,
        `import * as path from "node:path"`,
        `import { pathToFileURL } from "node:url"`,
        `const require = createRequire(import.meta.url)`,
        `/** The URL of \`file\` in the installed package \`name\` (beside its \`dist/index.js\`). */`,
        `export const moduleUrl = (name, file) =>`,
        `  pathToFileURL(path.join(path.dirname(path.dirname(require.resolve(name))), file)).href`
      ].join("\n"),
      loader: "js",
      resolveDir: cli
    }))
  }
}

const workspacePackages = ["terminal", "core", "node", "tools", "server", "daemon", "fleet"]

/** Each package's barrel, `export * as Name from "./Module.js"`: name → module. */
const barrels = Object.fromEntries(workspacePackages.map((name) => {
  const index = fs.readFileSync(path.join(root, "packages", name, "src/index.ts"), "utf8")
  return [
    `@agent-terminal/${name}`,
    Object.fromEntries([...index.matchAll(/export \* as (\w+) from "\.\/(\w+)\.js"/g)].map((m) => [m[1], m[2]]))
  ]
}))

const barrelImport = /(import|export)\s+(type\s+)?\{([^}]*)\}\s*from\s*"(@agent-terminal\/[a-z]+)";?/g

/**
 * `import { A, B } from "@agent-terminal/x"` as `import * as A from "@agent-terminal/x/A"` (and the same for
 * `export { … } from`): each module straight from its file, never through the package's barrel. Esbuild splits
 * by file, so a barrel reached by the eager code and by a lazy chunk would load, eagerly, every module any
 * chunk takes from it.
 */
const barrelToModules = (text, file) =>
  text.replace(barrelImport, (statement, keyword, typeOnly, names, from) => {
    if (typeOnly !== undefined) return statement
    const modules = barrels[from]
    const specifiers = names.split(",").map((name) => name.trim()).filter((name) =>
      name !== "" && !name.startsWith("type ")
    )
    return specifiers.map((specifier) => {
      const [name, alias = name] = specifier.split(/\s+as\s+/)
      if (modules[name] === undefined) throw new Error(`${file}: ${name} is not a module of ${from}`)
      return keyword === "import"
        ? `import * as ${alias} from "${from}/${modules[name]}";`
        : `export * as ${alias} from "${from}/${modules[name]}";`
    }).join("\n")
  })

const barrelFree = {
  name: "barrel-free",
  setup(build) {
    build.onLoad(
      { filter: /[/\\](packages[/\\][a-z]+[/\\]dist|apps[/\\](cli|bench)[/\\]src)[/\\].*\.[jt]s$/ },
      (args) => {
        const text = fs.readFileSync(args.path, "utf8")
        const rewritten = barrelToModules(text, args.path)
        const url = packageOf.exec(args.path)
        if (url === null || !rewritten.includes("import.meta.url")) {
          return {
            contents: rewritten,
            loader: args.path.endsWith(".ts") ? "ts" : "js",
            resolveDir: path.dirname(args.path)
          }
        }
        const [, name, inner] = url
        const located = `moduleUrl(${JSON.stringify(`@agent-terminal/${name}`)}, ${
          JSON.stringify(inner.split(path.sep).join("/"))
        })`
        return {
          contents: `import { moduleUrl } from "agent-terminal:module-url"\n${
            rewritten.replaceAll("import.meta.url", located)
          }`,
          loader: "js",
          resolveDir: path.dirname(args.path)
        }
      }
    )
  }
}

/** @effect/cli's configuration-file parsers, never called by our options. */
const noConfigFileParsers = {
  name: "no-config-file-parsers",
  setup(build) {
    build.onResolve({ filter: /^(yaml|toml|ini)$/ }, (args) => ({ path: args.path, namespace: "unbundled" }))
    build.onLoad({ filter: /.*/, namespace: "unbundled" }, (args) => ({
      contents:
        `export const parse = () => { throw new Error("agent-terminal does not bundle a ${args.path} parser") }\n`,
      loader: "js"
    }))
  }
}

/** The names an assignment (`=`, `+=`, `++`, a destructuring, a `for … of` head) writes, anywhere in `node`. */
const assignedNames = (node, names = new Set()) => {
  const targets = (target) => {
    if (ts.isIdentifier(target)) names.add(target.text)
    else if (ts.isParenthesizedExpression(target)) targets(target.expression)
    else if (ts.isArrayLiteralExpression(target)) target.elements.forEach(targets)
    else if (ts.isObjectLiteralExpression(target)) {
      for (const property of target.properties) {
        if (ts.isShorthandPropertyAssignment(property)) names.add(property.name.text)
        else if (ts.isPropertyAssignment(property)) targets(property.initializer)
        else if (ts.isSpreadAssignment(property)) targets(property.expression)
      }
    } else if (ts.isSpreadElement(target)) targets(target.expression)
    else if (ts.isBinaryExpression(target) && target.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
      targets(target.left)
    }
  }
  const visit = (node) => {
    if (
      ts.isBinaryExpression(node) && node.operatorToken.kind >= ts.SyntaxKind.FirstAssignment &&
      node.operatorToken.kind <= ts.SyntaxKind.LastAssignment
    ) targets(node.left)
    else if (
      (ts.isPrefixUnaryExpression(node) || ts.isPostfixUnaryExpression(node)) &&
      (node.operator === ts.SyntaxKind.PlusPlusToken || node.operator === ts.SyntaxKind.MinusMinusToken)
    ) targets(node.operand)
    else if (
      (ts.isForInStatement(node) || ts.isForOfStatement(node)) && !ts.isVariableDeclarationList(node.initializer)
    ) {
      targets(node.initializer)
    }
    ts.forEachChild(node, visit)
  }
  visit(node)
  return names
}

/**
 * An ES chunk's closing `export { … }` rewritten as the CommonJS chunk's `module.exports`: one object whose
 * properties are the exported values, read once the chunk has run. esbuild's own CommonJS form defines a getter
 * per export, twice (`__export`, then `__toCommonJS`): two closures, two accessor pairs and two maps per export,
 * ~1 MiB of the stdio server's heap for the ~1100 names its chunks export, and two calls per cross-chunk
 * reference until the optimizer inlines them. A value read once is the value for good when its binding is a declaration of the
 * chunk's top level that nothing assigns again (a `const`, a `function`, a `class`, a `let` or `var` never
 * written after; any assignment to the name anywhere in the chunk, whatever its scope, counts), and when no
 * other chunk reads it before the chunk has run: esbuild's static imports between chunks are acyclic (a chunk
 * holds the code its set of entry points shares, and imports only chunks shared by more). The others (an
 * imported binding passed on, a binding written later) keep a getter, as live as before.
 */
export const exportsAsValues = (text, file) => {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.JS)
  const exporting = source.statements.filter((statement) =>
    ts.isExportDeclaration(statement) || ts.isExportAssignment(statement) ||
    statement.modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword)
  )
  if (exporting.length === 0) return text
  const [clause] = exporting
  if (
    exporting.length !== 1 || !ts.isExportDeclaration(clause) || clause.moduleSpecifier !== undefined ||
    clause.isTypeOnly || clause.exportClause === undefined || !ts.isNamedExports(clause.exportClause)
  ) throw new Error(`${file}: not one closing export { … } clause`)
  const declarations = new Map()
  const declare = (name) => declarations.set(name, (declarations.get(name) ?? 0) + 1)
  const declareBinding = (binding) => {
    if (ts.isIdentifier(binding)) declare(binding.text)
    else for (const element of binding.elements) if (!ts.isOmittedExpression(element)) declareBinding(element.name)
  }
  for (const statement of source.statements) {
    if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) declareBinding(declaration.name)
    } else if ((ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement)) && statement.name) {
      declare(statement.name.text)
    }
  }
  const assigned = assignedNames(source)
  const fixed = (name) => declarations.get(name) === 1 && !assigned.has(name)
  const properties = clause.exportClause.elements.map((specifier) => {
    const local = (specifier.propertyName ?? specifier.name).text
    const key = JSON.stringify(specifier.name.text)
    return fixed(local) ? `${key}:${local}` : `get ${key}(){return ${local}}`
  })
  const values = `module.exports=Object.defineProperty({${properties.join(",")}},"__esModule",{value:!0});`
  return `${text.slice(0, clause.getStart(source))}${values}${text.slice(clause.getEnd())}`
}

/** What `exportsAsValues` relies on, checked on every build: no chunk imports itself through others statically. */
const staticImportsAcyclic = (metafile, files) => {
  const state = new Map()
  const visit = (file, trail) => {
    if (state.get(file) === "done") return
    if (state.get(file) === "open") throw new Error(`the chunks import each other: ${[...trail, file].join(" -> ")}`)
    state.set(file, "open")
    for (const imported of metafile.outputs[file]?.imports ?? []) {
      if (imported.external !== true && imported.kind === "import-statement") visit(imported.path, [...trail, file])
    }
    state.set(file, "done")
  }
  for (const file of files) visit(file, [])
}

/**
 * The CLI's chunks, split as ES modules (the only format esbuild splits), rewritten each as CommonJS in place: the
 * binary runs them through `vm.Script` with V8's code cache (apps/cli/launcher.cjs), which Node 20 offers for a
 * script, not for an ES module. Each chunk keeps its name and its modules (the module graph in bundle-meta.json
 * still holds); `import()` becomes `require()` of the chunk (still loaded only when called); `import.meta.url` the
 * chunk's own URL; the source maps chain to the ES chunk's map, so to the sources; a chunk exports one object of
 * values (`exportsAsValues`, before esbuild's pass, which then writes no `__toCommonJS`: the build fails if it does,
 * since esbuild's own form is two getters per export, each a call on every reference from another chunk).
 */
const toCommonJs = async (metafile, esmBanner, minify) => {
  const files = Object.keys(metafile.outputs).filter((file) => file.endsWith(".js"))
  const chunks = new Set(files.map((file) => path.basename(file)))
  for (const file of files) {
    for (const imported of metafile.outputs[file].imports) {
      if (imported.external !== true && !chunks.has(path.basename(imported.path))) {
        throw new Error(`${file} imports ${imported.path}, not a chunk of the bundle`)
      }
    }
  }
  staticImportsAcyclic(metafile, files)
  await Promise.all(files.map(async (file) => {
    const absolute = path.join(cli, file)
    const text = fs.readFileSync(absolute, "utf8")
    if (!text.includes(esmBanner)) throw new Error(`${file}: no banner to remove`)
    fs.writeFileSync(absolute, exportsAsValues(text.replace(esmBanner, ""), file))
    await esbuild.build({
      absWorkingDir: cli,
      entryPoints: [absolute],
      outfile: absolute,
      allowOverwrite: true,
      bundle: false,
      format: "cjs",
      platform: "node",
      target: "node20",
      supported: { "dynamic-import": false },
      define: { "import.meta.url": "__chunkUrl" },
      banner: { js: `var __chunkUrl=require("node:url").pathToFileURL(__filename).href;` },
      minifyWhitespace: minify,
      minifySyntax: minify,
      sourcemap: "linked",
      sourcesContent: false,
      legalComments: "none",
      logLevel: "warning",
      // the closing `module.exports` (exportsAsValues) in what esbuild reads as an ES module
      logOverride: { "commonjs-variable-in-esm": "silent" }
    })
    if (fs.readFileSync(absolute, "utf8").includes("__toCommonJS(")) {
      throw new Error(`${file}: esbuild exported it through __toCommonJS (exportsAsValues missed its exports)`)
    }
  }))
}

/** The binary: the launcher, with the build's identity (a hash of the chunks) that keys the code cache. */
const launcher = (dist) => {
  const hash = crypto.createHash("sha256")
  for (const name of fs.readdirSync(dist).filter((name) => name.endsWith(".js")).sort()) {
    hash.update(name).update(fs.readFileSync(path.join(dist, name)))
  }
  const text = fs.readFileSync(path.join(cli, "launcher.cjs"), "utf8")
  if (!text.includes(`const build = "BUILD_ID"`)) throw new Error("launcher.cjs: no BUILD_ID to fill")
  return text.replace(`const build = "BUILD_ID"`, `const build = "${hash.digest("hex").slice(0, 16)}"`)
}

/**
 * What the CLI prints for `--help`, `-h`, `--version` and each command's `--help` and `-h`, rendered by running the
 * built CLI (`dist/main.js`) with each: `dist/help.json`, which the launcher prints from without loading the CLI.
 * The commands are the top help's list. Each must exit 0 with nothing on stderr, or the build fails.
 */
const helpTexts = async (dist) => {
  const print = async (args) => {
    const main = path.join(dist, "main.js")
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [main, ...args], { encoding: "utf8" })
    if (stderr !== "") throw new Error(`agent-terminal ${args.join(" ")}: wrote to stderr: ${stderr}`)
    return stdout
  }
  const top = await print(["--help"])
  // eslint-disable-next-line no-control-regex
  const commands = [...top.replace(/\x1b\[[0-9;]*m/g, "").matchAll(/^ {2}- ([a-z][a-z-]*) /gm)].map((found) => found[1])
  if (commands.length === 0) throw new Error("agent-terminal --help: no commands listed")
  const keys = ["--help", "-h", "--version", ...commands.flatMap((command) => [`${command} --help`, `${command} -h`])]
  const printed = await Promise.all(keys.map((key) => print(key.split(" "))))
  const texts = [...new Set(printed)]
  const help = { keys: Object.fromEntries(keys.map((key, i) => [key, texts.indexOf(printed[i])])), texts }
  fs.writeFileSync(path.join(dist, "help.json"), JSON.stringify(help))
}

export const bundle = async (options = {}) => {
  const outdir = options.outdir ?? "dist"
  const dist = path.join(cli, outdir)
  fs.rmSync(dist, { recursive: true, force: true })
  fs.rmSync(path.join(bench, outdir), { recursive: true, force: true })
  const common = {
    absWorkingDir: cli,
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    external,
    plugins: [moduleUrl, barrelFree, noConfigFileParsers],
    // `require` for the CommonJS modules in the bundle (and the externals they require).
    banner: {
      js:
        `import { createRequire as __createRequire } from "node:module";const require = __createRequire(import.meta.url);`
    },
    minifyWhitespace: options.minify !== false,
    minifySyntax: options.minify !== false,
    sourcemap: "linked",
    sourcesContent: false,
    metafile: true,
    legalComments: "none",
    logLevel: "warning"
  }
  const result = await esbuild.build({ ...common, entryPoints, chunkNames: "chunk-[hash]" })
  await toCommonJs(result.metafile, common.banner.js, options.minify !== false)
  await esbuild.build({ ...common, absWorkingDir: bench, entryPoints: benchEntryPoints, chunkNames: "chunk-[hash]" })
  // The official SDK's no-op server as the SDK ships, unbundled (its imports from node_modules), in
  // apps/bench/dist/sdk: the floor of the mcp and lean groups, spawned the way ours is (its raw pty in a chunk of
  // its own); and the SDK's server answering our tool list (the lean group's floor of our contract).
  await esbuild.build({
    absWorkingDir: bench,
    entryPoints: { SdkNoopServer: "src/SdkNoopServer.ts", SdkContractServer: "src/SdkContractServer.ts" },
    outdir: path.join(outdir, "sdk"),
    bundle: true,
    splitting: true,
    packages: "external",
    format: "esm",
    platform: "node",
    target: "node20",
    sourcemap: "linked",
    sourcesContent: false,
    logLevel: "warning"
  })
  fs.writeFileSync(path.join(dist, "package.json"), `${JSON.stringify({ type: "commonjs" })}\n`)
  fs.writeFileSync(path.join(dist, "bin.js"), launcher(dist))
  fs.chmodSync(path.join(dist, "bin.js"), 0o755)
  await helpTexts(dist)
  fs.chmodSync(path.join(bench, outdir, "bin.js"), 0o755)
  if (outdir === "dist") {
    fs.mkdirSync(path.join(cli, "build"), { recursive: true })
    fs.writeFileSync(path.join(cli, "build/bundle-meta.json"), JSON.stringify(result.metafile))
  }
  return result
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = await bundle()
  const outputs = Object.entries(result.metafile.outputs).filter(([name]) => name.endsWith(".js"))
  const bytes = outputs.reduce((sum, [, output]) => sum + output.bytes, 0)
  process.stderr.write(`bundle: ${outputs.length} files, ${(bytes / 2 ** 20).toFixed(1)} MiB in apps/cli/dist\n`)
}
