#!/usr/bin/env node
// The reaper's native helper (native/reaper.c → build/native/agent-terminal-reaper), built at install as
// node-pty is (this package's `install` script, which npm and pnpm run) and by the workspace's `pnpm build`.
// It needs a C compiler ($CC, else cc, gcc or clang). Without one the install still succeeds, but says so: the
// reaper then runs as a second Node process (~50 MiB instead of a few hundred KiB), and `agent-terminal doctor`
// and the server's start report it.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const source = path.join(root, "native/reaper.c")
const output = path.join(root, "build/native/agent-terminal-reaper")
const say = (line) => process.stderr.write(`@agent-terminal/node: ${line}\n`)

const fresh = () => {
  try {
    return fs.statSync(output).mtimeMs >= fs.statSync(source).mtimeMs
  } catch {
    return false
  }
}

if (process.platform !== "linux") {
  say(`the reaper's native helper is for Linux; on ${process.platform} the reaper runs as a Node process`)
} else if (!fresh()) {
  fs.mkdirSync(path.dirname(output), { recursive: true })
  const compilers = [...new Set([process.env.CC, "cc", "gcc", "clang"].filter((cc) => cc !== undefined && cc !== ""))]
  const failures = []
  let built = false
  for (const cc of compilers) {
    try {
      execFileSync(cc, ["-O2", "-std=c99", "-Wall", "-o", `${output}.tmp`, source], {
        stdio: ["ignore", "ignore", "pipe"]
      })
      fs.renameSync(`${output}.tmp`, output)
      built = true
      break
    } catch (error) {
      failures.push(
        `${cc}: ${error.code === "ENOENT" ? "not found" : String(error.stderr ?? error.message).trim().split("\n")[0]}`
      )
    }
  }
  if (!built) {
    say("WARNING: the reaper's native helper could not be built (" + failures.join("; ") + ").")
    say("The reaper will run as a second Node process (~50 MiB). Install a C compiler (Debian: apt-get install gcc),")
    say("then run `npm rebuild @agent-terminal/node`.")
  }
}
