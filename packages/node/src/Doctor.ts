/**
 * What this host gives, checked for real, one finding each with what follows from it: ptys (a shell opened
 * and a command run to its prompt), the `stdin_read` tier (`cat` found waiting, and the kernel settings it
 * depends on: Yama's `ptrace_scope`, `/proc` mounted with `hidepid`), cgroup v2 containment (the session's
 * containment and the limits its cgroup got), bubblewrap and user namespaces (an empty sandbox started;
 * AppArmor's restriction reported), the isolated network's tool (pasta or slirp4netns, started with a
 * sandbox) and seccomp on this architecture. `agent-terminal doctor` prints it, the MCP server logs it.
 *
 * @since 0.3.0
 */
import { Ids, PtyService, type Sandbox } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Bubblewrap from "./Bubblewrap.js"
import { filterFor } from "./internal/sandbox/seccomp.js"
import * as NodeTerminal from "./NodeTerminal.js"
import * as Reaper from "./Reaper.js"

/**
 * One finding: `ok`; whether the given options `need` it (a missing needed piece fails the doctor); what
 * was found; what follows from it.
 *
 * @since 0.3.0
 */
export interface Check {
  readonly name: string
  readonly ok: boolean
  readonly needed: boolean
  readonly detail: string
  readonly consequence: string
}

/**
 * What the options ask of the host: a confined sandbox mode, and its network.
 *
 * @since 0.3.0
 */
export interface Needs {
  readonly sandbox?: Sandbox.Mode | undefined
  readonly network?: Sandbox.NetworkMode | undefined
  readonly networkTool?: string | undefined
}

const owner = Ids.OwnerId.make("doctor")

const read = (file: string): string | undefined => {
  try {
    return fs.readFileSync(file, "utf8").trim()
  } catch {
    return undefined
  }
}

const check = (
  name: string,
  ok: boolean,
  needed: boolean,
  detail: string,
  consequence: string
): Check => ({ name, ok, needed, detail, consequence })

/** What a shell on a pty shows: the prompt, a waiting `cat`, the containment and limits of its session. */
const sessionChecks = Effect.gen(function*() {
  const service = yield* PtyService.PtyService
  const opened = yield* service.open(owner, {})
  const id = Ids.SessionId.make(opened.sessionId)
  return yield* Effect.gen(function*() {
    const echo = yield* service.send(owner, id, { text: "echo doctor-$((6*7))", timeoutMs: 10_000 })
    const pty = check(
      "pty",
      echo.waitReason === "prompt" && echo.output === "doctor-42",
      true,
      `a ${opened.shell ?? "bash"} shell on a pty answered at its prompt (${echo.waitReason})`,
      echo.waitReason === "prompt" ? "terminals work" : "terminals do not settle by their prompt here"
    )
    const waiting = yield* service.send(owner, id, { text: "cat", timeoutMs: 5_000, idleMs: 4_000 })
    yield* service.send(owner, id, { keys: ["C-d"], timeoutMs: 5_000 }).pipe(Effect.ignore)
    const yama = read("/proc/sys/kernel/yama/ptrace_scope")
    const mount = (read("/proc/self/mountinfo") ?? "").split("\n").find((line) =>
      / \/proc proc /.test(line) || line.includes(" /proc ") && line.includes(" - proc ")
    )
    const hidepid = mount !== undefined && /hidepid=(?!0|off)/.test(mount)
    const exact = waiting.waitReason === "stdin_read"
    const stdin = check(
      "stdin_read",
      exact,
      false,
      `cat settled by ${waiting.waitReason}; /proc/<pid>/syscall and mem of our children ${
        exact ? "readable" : "not readable"
      } (Yama ptrace_scope ${yama ?? "absent"}${hidepid ? ", /proc mounted with hidepid" : ""})`,
      exact
        ? "a program waiting for input (a REPL, a question) is recognized at once (stdin_read)"
        : "programs waiting for input are recognized only by silence (inferred_idle, a guess after idleSilenceMs)"
    )
    const cgroup = opened.containment === "cgroup"
    const controllers = [
      ...(opened.limits.pidsMax !== undefined ? ["pids"] : []),
      ...(opened.limits.memoryMaxBytes !== undefined ? ["memory"] : [])
    ]
    const containment = check(
      "cgroup",
      cgroup,
      false,
      cgroup
        ? `each session gets its own cgroup v2 (writable)${
          controllers.length > 0 ? `, controllers: ${controllers.join(", ")}` : ", no pids or memory controller"
        }`
        : `no writable cgroup v2 here: sessions are contained by ${opened.containment}`,
      cgroup
        ? "close ends every process a session started, daemons included (cgroup.kill)" +
          (controllers.length < 2 ? "; the limits without a controller do not apply" : "")
        : "close finds processes by their ancestry: a daemon that left the tree and changed its session may survive"
    )
    return [pty, stdin, containment]
  }).pipe(Effect.ensuring(service.close(owner, id).pipe(Effect.ignore)))
})

/** An empty sandbox started as a session's would be (bwrap, namespaces, the seccomp filter, the network). */
const sandboxCheck = (network: Sandbox.NetworkMode, networkTool: string | undefined) =>
  Effect.gen(function*() {
    const workspace = fs.mkdtempSync(`${os.tmpdir()}/agent-terminal-doctor-`)
    const sandbox = yield* Bubblewrap.make({
      mode: "workspace-write",
      network,
      workspace,
      ...(networkTool !== undefined ? { networkTool } : {})
    })
    return yield* sandbox.confine({
      file: "/bin/sh",
      args: ["-c", ":"],
      cwd: workspace,
      env: { PATH: "/usr/bin:/bin" },
      cols: 80,
      rows: 24,
      label: "doctor",
      disposeGraceMs: 500,
      limits: {}
    }, sandbox.policy).pipe(
      Effect.as(undefined),
      Effect.catchAll((error) => Effect.succeed(error.message)),
      Effect.ensuring(Effect.sync(() => fs.rmSync(workspace, { recursive: true, force: true })))
    )
  }).pipe(Effect.catchAll((error) => Effect.succeed(error.message)))

const apparmorNote = (): string => {
  const restricted = read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
  const clone = read("/proc/sys/kernel/unprivileged_userns_clone")
  const max = read("/proc/sys/user/max_user_namespaces")
  return [
    restricted !== undefined
      ? `AppArmor restricts unprivileged user namespaces: ${restricted === "1" ? "yes" : "no"}`
      : "",
    clone !== undefined ? `unprivileged_userns_clone ${clone}` : "",
    max !== undefined ? `max_user_namespaces ${max}` : ""
  ].filter((part) => part !== "").join(", ")
}

/**
 * Run every check (about a second: a shell is opened and closed, and one or two empty sandboxes started).
 *
 * @since 0.3.0
 */
export const run = (needs: Needs = {}): Effect.Effect<ReadonlyArray<Check>> =>
  Effect.gen(function*() {
    const confined = needs.sandbox === "read-only" || needs.sandbox === "workspace-write"
    const sessions = yield* sessionChecks.pipe(
      Effect.scoped,
      Effect.provide(NodeTerminal.layer({ openTimeoutMs: 10_000 }).pipe(Layer.orDie)),
      Effect.catchAll((error) =>
        Effect.succeed([check("pty", false, true, `no shell could be opened: ${error.message}`, "nothing works here")])
      )
    )
    const filter = filterFor(process.arch, os.endianness())
    const seccomp = check(
      "seccomp",
      filter._tag === "Filter",
      confined,
      filter._tag === "Filter"
        ? `a filter for ${process.arch} (TIOCSTI, TIOCLINUX and new user namespaces refused)`
        : filter.reason,
      filter._tag === "Filter"
        ? "confined sessions cannot inject input into a terminal or nest namespaces"
        : "the confined modes do not start"
    )
    const notes = apparmorNote()
    const bwrap = yield* sandboxCheck("off", undefined)
    const sandbox = check(
      "bubblewrap",
      bwrap === undefined,
      confined,
      bwrap === undefined
        ? `an empty sandbox started (bwrap, user and pid namespaces, the seccomp filter)${
          notes === "" ? "" : `; ${notes}`
        }`
        : `${bwrap}${notes === "" ? "" : `; ${notes}`}`,
      bwrap === undefined
        ? "--sandbox read-only and workspace-write work"
        : "--sandbox read-only and workspace-write are refused at open (never a silent fallback)"
    )
    const isolated = bwrap === undefined ? yield* sandboxCheck("isolated", needs.networkTool) : bwrap
    const network = check(
      "network",
      isolated === undefined,
      confined && needs.network === "isolated",
      isolated === undefined
        ? `a sandbox with its own network started (${needs.networkTool ?? "pasta, else slirp4netns"})`
        : isolated,
      isolated === undefined
        ? "--network isolated works: outbound through a user-mode stack, the host's loopback unreachable"
        : "--network isolated is refused at open; off and host still work"
    )
    return [...sessions, sandbox, network, seccomp, ...reaperFinding(Reaper.nativeReaper())]
  })

/**
 * The reaper's finding, listed only when its native helper is missing (`helper`: `Reaper.nativeReaper()`): the
 * reaper then runs as a second Node process. Not needed by any option: the fallback ends the trees as well.
 *
 * @since 0.3.0
 */
export const reaperFinding = (helper: string | undefined): ReadonlyArray<Check> =>
  helper !== undefined ? [] : [
    check(
      "reaper",
      false,
      false,
      "the native helper (build/native/agent-terminal-reaper of @agent-terminal/node) is not built: no C " +
        "compiler at install, or another platform",
      "the reaper runs as a second Node process (~50 MiB); install a C compiler, then `npm rebuild " +
        "@agent-terminal/node`"
    )
  ]

/**
 * The findings as text, one line each: `ok`, `missing` (needed, not there) or `absent`, the name, what was
 * found, and what follows.
 *
 * @since 0.3.0
 */
export const render = (checks: ReadonlyArray<Check>): string =>
  checks.map((found) =>
    `${
      found.ok ? "ok     " : found.needed ? "MISSING" : "absent "
    } ${found.name}: ${found.detail} → ${found.consequence}`
  ).join("\n")

/**
 * The needed pieces that are missing (empty: everything the options need is there).
 *
 * @since 0.3.0
 */
export const missing = (checks: ReadonlyArray<Check>): ReadonlyArray<Check> =>
  checks.filter((found) => found.needed && !found.ok)
