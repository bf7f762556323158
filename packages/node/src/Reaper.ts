/**
 * Nothing left behind, whatever kills the owner of terminals (docs/daemon.md). `layerHostExit` is the host-exit
 * guard of `Teardown` plus a reaper process: started detached (its own session and process group, so a signal
 * to the owner's group does not reach it) with a pipe from the owner, told of every tree the owner starts and
 * ends; when the pipe ends — the owner died, by SIGKILL or the OOM killer too — it kills every tree still
 * tracked: `cgroup.kill`, the identity-fenced sweep, and every process that carries a tree's marker.
 *
 * `reapLeftovers` is for every start: it ends what owners that are gone left (their trees carry the owner
 * marker, `AGENT_TERMINAL_OWNER=<pid>:<start time>`; a reused pid is another process) and removes their
 * session cgroups.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as hostExit from "./internal/teardown/hostExit.js"
import { nodeProcReader, nodeSignaller } from "./internal/teardown/procTable.js"
import * as internal from "./internal/teardown/reaper.js"
import * as Teardown from "./Teardown.js"

const env = () => ({ reader: nodeProcReader, signal: nodeSignaller, selfPid: process.pid })

/**
 * What a start found of owners that are gone, and ended.
 *
 * @since 0.2.0
 */
export type Leftovers = internal.Leftovers

/**
 * End what owners that are gone left behind (processes carrying their owner marker, session cgroups of dead
 * hosts), and log what was reaped.
 *
 * @since 0.2.0
 */
export const reapLeftovers: Effect.Effect<Leftovers> = Effect.sync(() =>
  internal.reapLeftovers(env(), Teardown.OWNER_MARKER)
).pipe(
  Effect.tap((found) =>
    found.processes.length === 0 && found.cgroups.length === 0 ? Effect.void : Effect.logInfo(
      `reaper: ended what dead owners left: ${found.processes.length} process(es) (${
        found.processes.map((p) => `${p.pid} ${p.comm} of owner ${p.owner}`).join(", ") || "none"
      }), ${found.cgroups.length} cgroup(s) (${found.cgroups.join(", ") || "none"})`
    )
  ),
  Effect.withSpan("Reaper.reapLeftovers")
)

/**
 * The reaper's program in Node: `dist/reaperMain.js` of this package (next to this module once built), the
 * fallback when the native helper is not built.
 *
 * @since 0.2.0
 */
export const reaperProgram = (): string => {
  const here = path.dirname(fileURLToPath(import.meta.url))
  const beside = path.join(here, "reaperMain.js")
  return fs.existsSync(beside) ? beside : path.resolve(here, "../dist/reaperMain.js")
}

/**
 * The reaper's native helper (`native/reaper.c`, built at install into `build/native/`), or `undefined` when it
 * is not there (no C compiler at install, another platform): then the reaper runs as `reaperProgram()`.
 *
 * @since 0.3.0
 */
export const nativeReaper = (): string | undefined => {
  const helper = fileURLToPath(new URL("../build/native/agent-terminal-reaper", import.meta.url))
  try {
    fs.accessSync(helper, fs.constants.X_OK)
    return helper
  } catch {
    return undefined
  }
}

/**
 * One message to the reaper, a line (both reapers read it): `track <root pid> <start time> <cgroup> <marker>`
 * (the strings in hex, `-` when absent) or `untrack <root pid> <start time>`.
 *
 * @since 0.3.0
 */
export const reaperLine = (op: "track" | "untrack", tree: Teardown.TrackedTree): string => {
  const hex = (text: string | undefined) => text === undefined ? "-" : Buffer.from(text, "utf8").toString("hex")
  return op === "track"
    ? `track ${tree.rootPid} ${tree.startTime} ${hex(tree.cgroupPath)} ${hex(tree.marker)}\n`
    : `untrack ${tree.rootPid} ${tree.startTime}\n`
}

interface Reaper {
  readonly send: (op: "track" | "untrack", tree: Teardown.TrackedTree) => void
}

/** Said when the reaper has to run in Node. */
const fallbackWarning = Effect.suspend(() => {
  if (nativeReaper() !== undefined) return Effect.void
  return Effect.logWarning(
    "reaper: the native helper (build/native/agent-terminal-reaper of @agent-terminal/node) is not built, so " +
      "the reaper runs as a second Node process (~50 MiB); install a C compiler and run `npm rebuild " +
      "@agent-terminal/node` (agent-terminal doctor reports it)"
  )
})

/** The reaper process, restarted (and told every tree again) if it dies while the owner lives. */
const startReaper = (trees: Set<{ readonly tree: Teardown.TrackedTree }>) =>
  Effect.zipRight(
    fallbackWarning,
    Effect.acquireRelease(
      Effect.sync(() => {
        let child: ChildProcess | undefined
        let stopped = false
        const write = (line: string) => {
          try {
            child?.stdin?.write(line)
          } catch {
            // the reaper is gone: its exit handler starts another
          }
        }
        const helper = nativeReaper()
        const [command, args] = helper === undefined
          ? [process.execPath, [reaperProgram(), String(process.pid)]]
          : [helper, [String(process.pid)]]
        const launch = () => {
          child = spawn(command, args, {
            detached: true,
            stdio: ["pipe", "ignore", "inherit"]
          })
          child.on("error", () => {})
          child.stdin?.on("error", () => {})
          child.once("exit", () => {
            if (!stopped) launch()
          })
          child.unref()
          ;(child.stdin as unknown as { unref?: () => void } | null)?.unref?.()
          for (const entry of trees) write(reaperLine("track", entry.tree))
        }
        launch()
        return {
          send: (op: "track" | "untrack", tree: Teardown.TrackedTree) => write(reaperLine(op, tree)),
          stop: () => {
            stopped = true
            child?.stdin?.end()
          }
        }
      }),
      (reaper) => Effect.sync(() => reaper.stop())
    )
  )

/**
 * The host-exit guard with a reaper process behind it: trees are killed when this process exits (as
 * `Teardown.layerHostExit` does) and also when it dies without running anything (SIGKILL, OOM).
 *
 * @since 0.2.0
 */
export const layerHostExit = (
  options: {
    /**
     * `false`: SIGINT, SIGTERM and SIGHUP are left to the program, which closes its terminals gracefully (the
     * daemon does); the trees are still killed at `exit`, and by the reaper if the process dies. Default `true`.
     */
    readonly signals?: boolean | undefined
  } = {}
): Layer.Layer<Teardown.HostExit> =>
  Layer.scoped(
    Teardown.HostExit,
    Effect.gen(function*() {
      const registry = hostExit.makeRegistry(hostExit.nodeHost, (trees) => {
        hostExit.killTreesSync(env(), trees)
      }, { signals: options.signals !== false })
      const tracked = new Set<{ readonly tree: Teardown.TrackedTree }>()
      const reaper: Reaper = yield* startReaper(tracked)
      return Teardown.HostExit.of({
        track: (tree) =>
          Effect.gen(function*() {
            yield* registry.track(tree)
            const entry = { tree }
            yield* Effect.acquireRelease(
              Effect.sync(() => {
                tracked.add(entry)
                reaper.send("track", tree)
              }),
              () =>
                Effect.sync(() => {
                  tracked.delete(entry)
                  reaper.send("untrack", tree)
                })
            )
          })
      })
    })
  )

/**
 * Both containment services with the reaper: cgroups where possible (`sweep`: never), the guarded host exit.
 *
 * @since 0.2.0
 */
export const layerTeardown = (
  containment: "auto" | "sweep" = "auto",
  options: { readonly signals?: boolean | undefined } = {}
): Layer.Layer<Teardown.Cgroups | Teardown.HostExit> =>
  Layer.merge(containment === "sweep" ? Teardown.layerCgroupsDisabled : Teardown.layerCgroups, layerHostExit(options))
