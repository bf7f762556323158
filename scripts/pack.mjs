#!/usr/bin/env node
// `pnpm run pack [DIR]`: the workspace's publishable packages as npm tarballs in DIR (default build/packs),
// workspace references replaced by versions. Install them anywhere with plain npm:
//   npm install DIR/*.tgz && npx agent-terminal mcp
// Build first (`pnpm build`): the tarballs carry dist/.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
/** In dependency order. */
export const publishable = [
  "packages/terminal",
  "packages/core",
  "packages/node",
  "packages/tools",
  "packages/server",
  "packages/daemon",
  "packages/fleet",
  "apps/cli"
]

const pnpm = () => {
  const execPath = process.env.npm_execpath
  return execPath !== undefined && /pnpm/.test(path.basename(execPath)) && execPath.endsWith(".cjs")
    ? [process.execPath, [execPath]]
    : ["pnpm", []]
}

/** Pack every publishable package into `destination`; returns the tarballs' paths. */
export const pack = (destination) => {
  fs.mkdirSync(destination, { recursive: true })
  const [command, prefix] = pnpm()
  return publishable.map((pkg) => {
    const before = new Set(fs.readdirSync(destination))
    execFileSync(command, [...prefix, "pack", "--pack-destination", destination], {
      cwd: path.join(root, pkg),
      stdio: ["ignore", "pipe", "inherit"]
    })
    const made = fs.readdirSync(destination).filter((name) => name.endsWith(".tgz") && !before.has(name))
    const { name, version } = JSON.parse(fs.readFileSync(path.join(root, pkg, "package.json"), "utf8"))
    const expected = `${name.replace(/^@/, "").replace("/", "-")}-${version}.tgz`
    if (!fs.existsSync(path.join(destination, expected)) && made.length !== 1) {
      throw new Error(`pnpm pack of ${pkg} made ${made.join(", ") || "nothing"}`)
    }
    return path.join(destination, expected)
  })
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const destination = path.resolve(process.argv[2] ?? path.join(root, "build/packs"))
  for (const tarball of pack(destination)) process.stdout.write(`${tarball}\n`)
}
