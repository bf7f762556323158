import { Ids, PtyService, type Session, type TerminalConfig } from "@agent-terminal/core"
import { NodeTerminal, Teardown } from "@agent-terminal/node"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { alive, owner, testConfig } from "../support/terminal.js"

export { alive, owner }

/** How a session is held: its own cgroup v2 (where writable), or the identity-fenced sweep. */
export type Containment = "cgroup" | "sweep"

const ownCgroupDirectory = (): string | undefined => {
  try {
    const own = fs.readFileSync("/proc/self/cgroup", "utf8").split("\n").find((line) => line.startsWith("0::"))
    if (own === undefined) return undefined
    const relative = own.slice(3).trim()
    for (const line of fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
      const fields = line.split(" ")
      const separator = fields.indexOf("-")
      if (separator < 0 || fields[separator + 1] !== "cgroup2") continue
      const root = fields[3]!
      if (root !== "/" && relative !== root && !relative.startsWith(`${root}/`)) continue
      return path.posix.join(fields[4]!, root === "/" ? relative : relative.slice(root.length))
    }
  } catch {
    return undefined
  }
  return undefined
}

/** Where this process's session cgroups live (`<own cgroup>/agent-terminal-<pid>`), when cgroup v2 is here. */
export const sessionCgroupParent = (pid: number = process.pid): string | undefined => {
  const own = ownCgroupDirectory()
  return own === undefined ? undefined : path.join(own, `agent-terminal-${pid}`)
}

/**
 * Whether sessions get a cgroup on this host: the backend's own probe (a cgroup2 mount holding our cgroup,
 * writable, with `cgroup.kill` — Linux 5.14+ —, a process movable into a child). The tests of the cgroup
 * path run only then; the sweep runs everywhere.
 */
export const cgroupsUsable: boolean = await Effect.runPromise(
  Effect.flatMap(Teardown.Cgroups, (cgroups) => cgroups.available).pipe(
    Effect.map(Option.isSome),
    Effect.provide(Teardown.layerCgroups)
  )
)

/** The containments to run a teardown test under here. */
export const containments: ReadonlyArray<Containment> = cgroupsUsable ? ["cgroup", "sweep"] : ["sweep"]

/** The real service with the given containment (`cgroup` = the default `auto`, which picks a cgroup here). */
export const TeardownTerminal = (
  containment: Containment,
  config: TerminalConfig.TerminalConfigInput = {},
  hostEnv?: Readonly<Record<string, string | undefined>>
) =>
  NodeTerminal.layer({ ...testConfig, ...config }, {
    containment: containment === "sweep" ? "sweep" : "auto",
    ...(hostEnv !== undefined ? { hostEnv } : {})
  })

const environOf = (pid: number): string => {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, "latin1")
  } catch {
    return ""
  }
}

/**
 * Live processes whose environment carries `TEARDOWN_TAG=<tag>`: everything a session started after
 * `export TEARDOWN_TAG=<tag>` — daemons that left the tree, the session and the process group included.
 */
export const tagged = (tag: string): Array<number> => {
  const needle = `TEARDOWN_TAG=${tag}`
  return fs.readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => pid !== process.pid && alive(pid) && environOf(pid).split("\0").includes(needle))
}

export const commOf = (pid: number): string => {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, "latin1").trim()
  } catch {
    return ""
  }
}

export const waitUntil = (condition: () => boolean, ms = 10_000) =>
  Effect.gen(function*() {
    const deadline = Date.now() + ms
    while (!condition()) {
      if (Date.now() >= deadline) return false
      yield* Effect.sleep(10)
    }
    return true
  })

/** SIGKILL whatever is left (a test's cleanup, so a failing test leaves nothing behind either). */
export const killAll = (pids: ReadonlyArray<number>) => {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // gone
    }
  }
}

/**
 * A shell whose later children carry a fresh tag. Closed (if still open) and anything tagged killed when
 * the test's scope ends.
 */
export const openTagged = (request: Session.OpenRequest = {}) =>
  Effect.gen(function*() {
    const service = yield* PtyService.PtyService
    const opened = yield* service.open(owner, request)
    const id = Ids.SessionId.make(opened.sessionId)
    const tag = randomUUID()
    yield* Effect.addFinalizer(() =>
      service.close(owner, id).pipe(
        Effect.ignore,
        Effect.ensuring(Effect.sync(() => killAll(tagged(tag))))
      )
    )
    yield* service.send(owner, id, { text: `export TEARDOWN_TAG=${tag}` })
    const send = (text: string, options: Omit<Session.SendRequest, "text"> = {}) =>
      service.send(owner, id, { text, ...options })
    const close = service.close(owner, id)
    return { service, id, opened, tag, send, close, tagged: () => tagged(tag) }
  })
