#!/usr/bin/env node
// The `agent-terminal` binary (copied to dist/bin.js by scripts/bundle.mjs): it runs the bundle's CommonJS chunks
// (dist/main.js and the chunks it requires) through `vm.Script` with V8's code cache, so a start after the first
// neither parses the chunks nor compiles the functions the previous start of the same command compiled. Node 20
// has no compile cache of its own for a program (`module.enableCompileCache` is 22.1+) and takes no cached data
// for an ES module, hence CommonJS chunks. The cache lives under the temporary directory, one directory per user,
// node version and build, one file per command and chunk; a cache missing, unreadable or rejected by V8 (another
// V8, other flags) is compiled as usual and written once the start is over (2 s after it; a chunk first loaded
// later, at exit). A start that ends sooner (a client that only listed the tools) writes at its exit what its short
// life compiled, and marks the caches `early`: the next start that runs 2 s writes them again, with what it
// compiled (V8 keeps no cache up to date by itself, and a valid cache is otherwise never written again). At the
// same moment the caches of other builds and node versions that no start has used for a week are removed.
// Nothing here may fail the start: any error of the cache is a start without it.
// With source maps on (`--enable-source-maps`) or AGENT_TERMINAL_COMPILE_CACHE=off, Node's own `require` loads
// the chunks (Node maps its own modules' stack traces; not a `vm.Script`'s).
"use strict"
const fs = require("node:fs")
const Module = require("node:module")
const os = require("node:os")
const path = require("node:path")
const vm = require("node:vm")

/** The build's identity, written by scripts/bundle.mjs: a hash of every chunk. */
const build = "BUILD_ID"

const wrapperHead = "(function (exports, require, module, __filename, __dirname) {\n"

/**
 * The cache's directory for this user, node and build, or undefined when there can be none: in the user's private
 * directory, `<tmpdir>/agent-terminal-<uid>` (the sandbox keeps its files there too), which must be a directory of
 * this user's, not a symlink, closed to others (code another user could write would run as this one).
 */
const cacheDirectory = (root, id) => {
  const uid = typeof process.getuid === "function" ? process.getuid() : -1
  const base = path.join(root, `agent-terminal-${uid}`)
  try {
    fs.mkdirSync(base, { mode: 0o700 })
  } catch (error) {
    if (error.code !== "EEXIST") return undefined
  }
  const stat = fs.lstatSync(base)
  if (!stat.isDirectory() || stat.isSymbolicLink() || stat.uid !== uid || (stat.mode & 0o077) !== 0) return undefined
  const dir = path.join(base, "compile-cache", `${process.version}-${process.arch}-${id}`)
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  return dir
}

/** How long a build's cache is kept after its last start: other builds' and node versions' caches go after it. */
const keepUnusedMs = 7 * 24 * 60 * 60 * 1000

/**
 * Mark `dir` (this build's cache) as used now, and remove the caches of other builds and node versions in the same
 * `compile-cache` directory that no start has used for `keepUnusedMs`: each build would otherwise leave its caches
 * (1–3 MB per command) in the user's temporary directory for good. Only entries named as `cacheDirectory` names
 * them, real directories (not symlinks), are removed. Returns the names removed (for the tests); never throws.
 */
const prune = (dir, now = Date.now()) => {
  const removed = []
  try {
    const seconds = now / 1000
    fs.utimesSync(dir, seconds, seconds)
    const parent = path.dirname(dir)
    for (const name of fs.readdirSync(parent)) {
      if (name === path.basename(dir) || !/^v\d+\.\d+\.\d+-[a-z0-9]+-[0-9a-f]{16}$/.test(name)) continue
      const entry = path.join(parent, name)
      const stat = fs.lstatSync(entry)
      if (!stat.isDirectory() || now - stat.mtimeMs < keepUnusedMs) continue
      fs.rmSync(entry, { recursive: true, force: true })
      removed.push(name)
    }
  } catch {}
  return removed
}

/** The command this start runs (`mcp`, `--help`, …), as one path segment: each command has its own cache. */
const commandOf = (argv) => {
  const first = argv[2]
  return first !== undefined && /^-{0,2}[a-z][a-z-]{0,23}$/.test(first) ? first.replace(/^-+/, "_") : "_"
}

/** The mark of a command's caches written by a start that ended before its start was over (see the top). */
const EARLY = "early"

/**
 * Run `entry` (a chunk file in `dist`) with the code cache in `cacheDir` (undefined: none). Returns what happened
 * to each chunk's cache (`accepted`, `rejected`, `missing`, `unreadable`) and `write(over = true)`, which writes
 * the caches of the chunks that had none (and returns their names); both for the tests. `over`: the start ran its
 * 2 s, and then caches marked `early` are all written again; a write before (`false`, at an early exit) marks what
 * it wrote `early`.
 */
const run = (dist, entry, cacheDir) => {
  const native = Module.createRequire(path.join(dist, "bin.js"))
  const loaded = new Map()
  const scripts = new Map()
  const every = new Map()
  const status = {}
  const cacheFile = (name) => path.join(cacheDir, `${name}.cache`)
  const readCache = (name) => {
    if (cacheDir === undefined) return ["missing", undefined]
    try {
      return ["read", fs.readFileSync(cacheFile(name))]
    } catch (error) {
      return [error && error.code === "ENOENT" ? "missing" : "unreadable", undefined]
    }
  }
  const load = (file) => {
    const known = loaded.get(file)
    if (known !== undefined) return known.exports
    const name = path.basename(file)
    let source = fs.readFileSync(file, "utf8")
    if (source.startsWith("#!")) source = `//${source.slice(2)}`
    const [read, cachedData] = readCache(name)
    let script
    try {
      script = new vm.Script(`${wrapperHead}${source}\n})`, { filename: file, lineOffset: -1, cachedData })
    } catch (error) {
      if (cachedData === undefined) throw error
      script = new vm.Script(`${wrapperHead}${source}\n})`, { filename: file, lineOffset: -1 })
    }
    status[name] = read === "read" ? (script.cachedDataRejected ? "rejected" : "accepted") : read
    if (status[name] !== "accepted") scripts.set(name, script)
    every.set(name, script)
    const module = { exports: {}, filename: file, id: file, loaded: false }
    loaded.set(file, module)
    const require = (id) => id.startsWith("./") ? load(path.join(dist, id)) : native(id)
    require.resolve = native.resolve
    require.cache = native.cache
    script.runInThisContext().call(module.exports, module.exports, require, module, file, dist)
    module.loaded = true
    return module.exports
  }
  const write = (over = true) => {
    const written = []
    if (cacheDir === undefined) return written
    const early = path.join(cacheDir, EARLY)
    const again = over && fs.existsSync(early)
    for (const [name, script] of again ? every : scripts) {
      try {
        const temporary = `${cacheFile(name)}.${process.pid}`
        fs.writeFileSync(temporary, script.createCachedData(), { mode: 0o600 })
        fs.renameSync(temporary, cacheFile(name))
        written.push(name)
      } catch {}
    }
    scripts.clear()
    try {
      if (again) fs.rmSync(early, { force: true })
      else if (!over && written.length > 0) fs.writeFileSync(early, "", { mode: 0o600 })
    } catch {}
    return written
  }
  load(path.join(dist, entry))
  return { status, write }
}

/**
 * Print what the CLI prints for `--help`, `-h`, `--version`, or a command's `--help` / `-h`, from the texts the build
 * rendered by running the CLI with each (`dist/help.json`: `keys` maps the arguments to an index in `texts`), without
 * loading the CLI, whose own start took ~3× `node -e 0` for it. `true` when printed; any other arguments, or no
 * readable texts, start the CLI.
 */
const printHelp = (dist, args) => {
  if (args.length === 0 || args.length > 2 || !/^(--help|-h|--version)$/.test(args[args.length - 1])) return false
  let help
  try {
    help = JSON.parse(fs.readFileSync(path.join(dist, "help.json"), "utf8"))
  } catch {
    return false
  }
  const key = args.join(" ")
  const text = Object.hasOwn(help.keys, key) ? help.texts[help.keys[key]] : undefined
  if (typeof text !== "string") return false
  process.stdout.write(text)
  return true
}

/** Start the CLI: with the code cache unless source maps are on, it is turned off, or it cannot be had. */
const start = () => {
  if (printHelp(__dirname, process.argv.slice(2))) return
  const entry = path.join(__dirname, "main.js")
  if (process.sourceMapsEnabled === true || process.env.AGENT_TERMINAL_COMPILE_CACHE === "off") {
    require(entry)
    return
  }
  let buildDir
  let cacheDir
  try {
    buildDir = cacheDirectory(process.env.AGENT_TERMINAL_COMPILE_CACHE_DIR ?? os.tmpdir(), build)
    cacheDir = path.join(buildDir, commandOf(process.argv))
    fs.mkdirSync(cacheDir, { recursive: true, mode: 0o700 })
  } catch {
    cacheDir = undefined
  }
  const { write } = run(__dirname, "main.js", cacheDir)
  if (cacheDir === undefined) return
  // the start is over 2 s after it began; an exit sooner writes what it compiled so far, marked early
  let over = false
  let pruned = false
  const settle = () => {
    write(over)
    if (pruned) return
    pruned = true
    prune(buildDir)
  }
  setTimeout(() => {
    over = true
    settle()
  }, 2000).unref()
  process.once("exit", settle)
}

module.exports = { run, commandOf, cacheDirectory, prune }

if (require.main === module) start()
