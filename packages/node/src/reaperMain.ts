/**
 * The reaper process in Node (`node reaperMain.js`), the fallback of the native helper (`native/reaper.c`)
 * where it is not built: started by a process that owns terminals, detached in its own session and process
 * group, with a pipe from its owner as its stdin. The owner writes each tree it starts and ends, one line each
 * (`Reaper.reaperLine`: `track <root pid> <start time> <cgroup, hex> <marker, hex>`, `untrack <root pid>
 * <start time>`). At the end of the pipe — the owner is gone, whatever killed it: SIGKILL and the OOM killer
 * included, the kernel closes the pipe either way — it kills every tree still tracked (`cgroup.kill`, the
 * identity-fenced KILL rounds, and every process carrying a tree's marker), removes their cgroups, says what
 * it did on stderr, and exits.
 *
 * @since 0.2.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { nodeProcReader, nodeSignaller } from "./internal/teardown/procTable.js"
import { reapTrees } from "./internal/teardown/reaper.js"
import type { TrackedTree } from "./Teardown.js"

const trees = new Map<string, TrackedTree>()
const keyOf = (tree: TrackedTree) => `${tree.rootPid}:${tree.startTime}`
const ownerPid = Number(process.argv[2] ?? process.ppid)

process.stderr.on("error", () => {})
process.on("SIGPIPE", () => {})

const unhex = (field: string): string | undefined =>
  field === "-" ? undefined : Buffer.from(field, "hex").toString("utf8")

const say = (line: string) => {
  try {
    process.stderr.write(`agent-terminal reaper: ${line}\n`)
  } catch {
    // nobody to tell
  }
}

let pending = ""
process.stdin.setEncoding("utf8")
process.stdin.on("data", (chunk: string) => {
  pending += chunk
  for (let newline = pending.indexOf("\n"); newline >= 0; newline = pending.indexOf("\n")) {
    const line = pending.slice(0, newline)
    pending = pending.slice(newline + 1)
    const [op, rootPid, startTime, cgroupPath, marker] = line.split(" ")
    const tree = { rootPid: Number(rootPid), startTime: Number(startTime) }
    if (!Number.isInteger(tree.rootPid) || !Number.isInteger(tree.startTime)) continue
    if (op === "untrack") trees.delete(keyOf(tree))
    else if (op === "track" && cgroupPath !== undefined && marker !== undefined) {
      trees.set(keyOf(tree), { ...tree, cgroupPath: unhex(cgroupPath), marker: unhex(marker) })
    }
  }
})

const reap = () => {
  // the wall clock: this process outlives its owner and runs no Effect at all
  const started = Date.now()
  const all = [...trees.values()]
  trees.clear()
  const killed = all.length === 0
    ? []
    : reapTrees({ reader: nodeProcReader, signal: nodeSignaller, selfPid: process.pid }, all)
  for (
    const parent of new Set(all.flatMap((tree) => tree.cgroupPath === undefined ? [] : [path.dirname(tree.cgroupPath)]))
  ) {
    try {
      fs.rmdirSync(parent)
    } catch {
      // not empty, or gone already
    }
  }
  if (all.length > 0) {
    say(
      `owner ${ownerPid} is gone: ${all.length} tree(s) it still held ended, ${killed.length} process(es) killed ` +
        // the wall clock, as above
        `(${killed.join(" ") || "none alive"}) in ${Date.now() - started} ms`
    )
  }
  process.exit(0)
}

process.stdin.once("end", reap)
process.stdin.once("close", reap)
process.stdin.once("error", reap)
