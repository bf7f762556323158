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
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

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

/**
 * A CommonJS chunk's exports as one level of getters. esbuild's CommonJS output defines each export as a getter on
 * the chunk's namespace object (an ES module's live binding), then exports `__toCommonJS(namespace)`: a second
 * object whose getters call the first's. Every reference of one chunk to another's export (`import_chunk_X.name`)
 * then ran two getters, a call each in code V8 has not optimized: ~5 % of a warm server's busy main thread in a
 * stdio send, and the send's CPU 0.90× without the second (docs/performance.md, "The send's CPU, fourth look").
 * The namespace object itself, marked `__esModule` as `__toCommonJS` marks its copy, is exported instead: the same
 * names, the same live bindings. `__toCommonJS(` is replaced by a name of the same length, so that the source map's
 * columns still hold.
 */
export const oneLevelOfGetters = (file, text) => {
  const exported = /module\.exports\s*=\s*__toCommonJS\(/g
  const found = text.match(exported) ?? []
  if (found.length > 1) throw new Error(`${file}: ${found.length} module.exports of __toCommonJS`)
  if (found.length === 0) return text
  if (text.includes("__esmExports")) throw new Error(`${file}: already uses __esmExports`)
  const mapComment = text.lastIndexOf("\n//# sourceMappingURL=")
  if (mapComment === -1) throw new Error(`${file}: no source map comment`)
  return `${
    text.slice(0, mapComment).replace(exported, (match) => match.replace("__toCommonJS(", "__esmExports("))
  }\n` +
    `function __esmExports(namespace){return Object.defineProperty(namespace,"__esModule",{value:!0})}` +
    text.slice(mapComment)
}

/**
 * The CLI's chunks, split as ES modules (the only format esbuild splits), rewritten each as CommonJS in place: the
 * binary runs them through `vm.Script` with V8's code cache (apps/cli/launcher.cjs), which Node 20 offers for a
 * script, not for an ES module. Each chunk keeps its name and its modules (the module graph in bundle-meta.json
 * still holds); `import()` becomes `require()` of the chunk (still loaded only when called); `import.meta.url` the
 * chunk's own URL; the source maps chain to the ES chunk's map, so to the sources; a chunk exports its namespace
 * object itself (`oneLevelOfGetters`).
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
  await Promise.all(files.map(async (file) => {
    const absolute = path.join(cli, file)
    const text = fs.readFileSync(absolute, "utf8")
    if (!text.includes(esmBanner)) throw new Error(`${file}: no banner to remove`)
    fs.writeFileSync(absolute, text.replace(esmBanner, ""))
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
      logLevel: "warning"
    })
    fs.writeFileSync(absolute, oneLevelOfGetters(file, fs.readFileSync(absolute, "utf8")))
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
