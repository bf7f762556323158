#!/usr/bin/env node
// The README's two commands: `npm start` (node scripts/setup.mjs demo) and `npm test` (… test).
// Plain Node, no dependencies: it runs before anything is installed. It checks the system programs of
// scripts/system-packages.json (installing the missing ones with apt-get on Debian as root, otherwise
// stopping before anything runs and printing what to install), gets the pnpm version package.json pins
// (the one on PATH when it is that version, else a private copy under .tools/ installed with npm), installs
// the workspace, then runs the demo, or the typecheck, the lint and the whole test suite.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const [goal, ...rest] = process.argv.slice(2)
const goals = { demo: ["run"], test: ["run", "test"] }

const say = (line) => process.stderr.write(`setup: ${line}\n`)
const fail = (line, code = 1) => {
  say(line)
  process.exit(code)
}

if (!(goal in goals)) fail(`usage: node scripts/setup.mjs demo|test [arguments for the demo, or for vitest]`, 2)
if (Number(process.versions.node.split(".")[0]) < 20) fail(`Node.js 20 or later is needed (this is ${process.version})`)
if (process.platform !== "linux" && process.platform !== "darwin") {
  fail(`Linux or macOS is needed (this is ${process.platform})`)
}

const run = (command, args, options = {}) => {
  const result = spawnSync(command, args, { stdio: "inherit", cwd: root, ...options })
  if (result.error) fail(`${command}: ${result.error.message}`)
  return result.status ?? 1
}
const runOrExit = (command, args, options) => {
  const status = run(command, args, options)
  if (status !== 0) process.exit(status)
}

const onPath = (name) =>
  (process.env.PATH ?? "").split(path.delimiter).filter(Boolean).some((dir) => {
    try {
      fs.accessSync(path.join(dir, name), fs.constants.X_OK)
      return fs.statSync(path.join(dir, name)).isFile()
    } catch {
      return false
    }
  })

const present = (requirement) =>
  requirement.python !== undefined
    ? spawnSync("python3", ["-c", `import ${requirement.python}`], { stdio: "ignore" }).status === 0
    : onPath(requirement.check)

// --- system programs
const list = JSON.parse(fs.readFileSync(path.join(root, "scripts/system-packages.json"), "utf8"))
const wanted = goals[goal].flatMap((group) => list[group])
const missingOf = () => wanted.filter((requirement) => !present(requirement))
let missing = missingOf()
if (missing.length > 0) {
  const names = [...new Set(missing.map((requirement) => requirement.debian))]
  const debian = fs.existsSync("/etc/debian_version") && onPath("apt-get")
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0
  if (debian && isRoot) {
    say(`installing with apt-get: ${names.join(" ")}`)
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
    runOrExit("apt-get", ["update", "-qq"], { env })
    runOrExit("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...names], { env })
    missing = missingOf()
  }
  if (missing.length > 0) {
    say(`missing before anything can run (${goal}):`)
    for (const requirement of missing) {
      const what = requirement.python !== undefined ? `python3 module ${requirement.python}` : requirement.check
      say(`  ${what} — Debian package ${requirement.debian}, for ${requirement.for}`)
    }
    const packages = [...new Set(missing.map((requirement) => requirement.debian))].join(" ")
    say(
      debian
        ? `install them with: sudo apt-get install -y --no-install-recommends ${packages}`
        : `install the programs above with this system's package manager (Debian names: ${packages})`
    )
    process.exit(1)
  }
}

// --- pnpm, the version package.json pins
const pinned = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).packageManager
const version = /^pnpm@(\d+\.\d+\.\d+)$/.exec(pinned ?? "")?.[1]
if (version === undefined) fail(`package.json's packageManager must pin pnpm@x.y.z (it says ${pinned})`)
const versionOf = (command) => {
  const result = spawnSync(command, ["--version"], { encoding: "utf8" })
  return result.status === 0 ? result.stdout.trim() : undefined
}
const env = { ...process.env, COREPACK_ENABLE_STRICT: "0" }
if (versionOf("pnpm") !== version) {
  const prefix = path.join(root, ".tools", `pnpm-${version}`)
  const bin = path.join(prefix, "node_modules", ".bin")
  if (versionOf(path.join(bin, "pnpm")) !== version) {
    say(`installing pnpm ${version} into ${path.relative(root, prefix)} (npm, the package's own registry copy)`)
    fs.mkdirSync(prefix, { recursive: true })
    runOrExit("npm", [
      "install",
      "--prefix",
      prefix,
      "--no-save",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      `pnpm@${version}`
    ])
  }
  env.PATH = `${bin}${path.delimiter}${env.PATH ?? ""}`
}
const pnpm = (...args) => runOrExit("pnpm", args, { env })

// --- the workspace
pnpm("install", "--frozen-lockfile")
if (goal === "demo") {
  pnpm("build")
  runOrExit(process.execPath, ["apps/cli/dist/bin.js", "demo", ...rest], { env })
} else {
  pnpm("check")
  pnpm("lint")
  pnpm("build")
  const report = path.join(root, "build/test-report.json")
  fs.rmSync(report, { force: true })
  const status = run("pnpm", ["exec", "vitest", "run", ...rest], { env })
  // one plain line from vitest's JSON report (vitest.config.ts writes it), the last thing CI prints
  if (fs.existsSync(report)) {
    const r = JSON.parse(fs.readFileSync(report, "utf8"))
    const skipped = r.numPendingTests + (r.numTodoTests ?? 0)
    console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed` + (skipped ? `, ${skipped} skipped` : ""))
  }
  process.exit(status)
}
