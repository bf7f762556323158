import { randomUUID } from "node:crypto"
import * as fs from "node:fs"

const MARK = "AGENT_TERMINAL_TEST_RUN"

const environOf = (pid: number): string => {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, "latin1")
  } catch {
    return ""
  }
}

const ancestorsOf = (pid: number): Set<number> => {
  const out = new Set<number>()
  let current = pid
  while (current > 1 && !out.has(current)) {
    out.add(current)
    try {
      const stat = fs.readFileSync(`/proc/${current}/stat`, "latin1")
      current = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
    } catch {
      break
    }
  }
  return out
}

const stateOf = (pid: number): string => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
  } catch {
    return "X"
  }
}

const parentOf = (pid: number): number => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
  } catch {
    return 0
  }
}

/** The vitest pool's own workers (children of this process running node) are not the tests' processes. */
const isPoolWorker = (pid: number): boolean => {
  if (parentOf(pid) !== process.pid) return false
  try {
    return fs.readlinkSync(`/proc/${pid}/exe`) === fs.readlinkSync("/proc/self/exe")
  } catch {
    return false
  }
}

const marked = (token: string): Array<number> => {
  const mine = ancestorsOf(process.pid)
  const needle = `${MARK}=${token}`
  return fs.readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => !mine.has(pid) && !isPoolWorker(pid) && stateOf(pid) !== "Z" && stateOf(pid) !== "X")
    .filter((pid) => environOf(pid).split("\0").includes(needle))
}

const describe = (pid: number): string => {
  try {
    return `${pid} ${fs.readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0").join(" ").trim()}`
  } catch {
    return `${pid}`
  }
}

/**
 * Every process the suite starts inherits a per-run token in its environment; after the last test, any
 * process still carrying it is a leak: the run fails and names it (and the leak is then killed).
 */
export default function setup() {
  if (process.platform !== "linux") return
  const token = randomUUID()
  process.env[MARK] = token
  return async () => {
    let left = marked(token)
    for (let i = 0; i < 40 && left.length > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      left = marked(token)
    }
    if (left.length === 0) return
    const names = left.map(describe)
    for (const pid of left) {
      try {
        process.kill(pid, "SIGKILL")
      } catch {
        // already gone
      }
    }
    throw new Error(`the test run left ${left.length} process(es) running:\n${names.join("\n")}`)
  }
}
