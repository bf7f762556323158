/**
 * The bubblewrap sandbox (`bwrap`, what Codex and Claude Code use on Linux). A confined session's argv is
 * wrapped once — a small launcher that execs `bwrap <namespaces> <mounts> --seccomp 3 --chdir <cwd> --
 * <shell>` — inside the session's containment, so the whole sandbox is in the session's cgroup. In
 * `read-only` and `workspace-write` the network is `off` unless `isolated` (own namespace, outbound through
 * pasta or slirp4netns, the host's loopback unreachable) or `host` is asked for; `/tmp`, `/var/tmp` and `/run`
 * are always private, the deny-read list is masked, the git metadata of the workspace is read-only, and a
 * seccomp filter stops TIOCSTI, nested user namespaces and the kernel keyrings. `danger-full-access` runs the
 * program as given. When something of this is missing here — bwrap, user namespaces, the network tool, a
 * seccomp filter for this architecture — opening a confined session fails with `SandboxUnavailable` and the
 * reason: never a weaker sandbox in its place.
 *
 * @since 0.1.0
 */
import { Errors, type PtyBackend, Sandbox } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import type { ConfinedMode, Spec } from "./internal/sandbox/bwrapArgs.js"
import { bwrapArgs, isWithin } from "./internal/sandbox/bwrapArgs.js"
import { probe, resolveBinary } from "./internal/sandbox/bwrapProbe.js"
import {
  defaultDenyRead,
  gitBinds,
  homes,
  masksFor,
  nameResolutionFiles,
  stateDirOf
} from "./internal/sandbox/hostPaths.js"
import type { NetworkTool } from "./internal/sandbox/launcher.js"
import { launch } from "./internal/sandbox/launcher.js"
import { resolveNetworkTool } from "./internal/sandbox/networkTool.js"
import { attach, locate, nodeLauncherView } from "./internal/sandbox/sandboxedProcess.js"
import { emptyFile, privateDirPath, seccompFile } from "./internal/sandbox/seccompFile.js"
import { networkOf, type Options, policyOf, realDirectory } from "./SandboxOptions.js"

export {
  /** @since 0.2.0 */
  networkOf,
  /** @since 0.1.0 */
  type Options,
  /** @since 0.1.0 */
  policyOf
} from "./SandboxOptions.js"

/**
 * The paths masked by default in the confined modes (`~/` is every home directory), besides the state
 * directory.
 *
 * @since 0.2.0
 */
export const defaultDeniedPaths: ReadonlyArray<string> = defaultDenyRead

/**
 * The bwrap argv of one confined request, without host lookups (exported for documentation and tests).
 *
 * @since 0.1.0
 */
export const commandLine = (
  policy: {
    readonly mode: ConfinedMode
    readonly network: Sandbox.NetworkMode | boolean
    readonly workspace: string
    readonly asRoot?: boolean
  },
  request: { readonly cwd: string; readonly file: string; readonly args: ReadonlyArray<string> },
  host: Partial<Pick<Spec, "masks" | "git" | "nameResolution" | "emptyFile">> = {}
): ReadonlyArray<string> =>
  bwrapArgs({
    asRoot: process.getuid?.() === 0,
    ...policy,
    network: networkOf(policy.network),
    ...request,
    ...host,
    emptyFile: host.emptyFile ?? path.join(privateDirPath(), "empty")
  })

/**
 * The sandbox service over bwrap; `make` checks the options (`InvalidConfig`), the first confined open
 * of each network mode checks bwrap, the seccomp filter and the network tool for real.
 *
 * @since 0.1.0
 */
export const make = (options: Options): Effect.Effect<Sandbox.Sandbox["Type"], Errors.InvalidConfig> =>
  Effect.gen(function*() {
    const policy = yield* policyOf(options)
    const bwrap = options.bwrap ?? "bwrap"
    const startTimeoutMs = options.startTimeoutMs ?? 10_000
    const stateDir = options.stateDir ?? stateDirOf(process.env)
    const denied = [...defaultDenyRead, ...(options.denyRead ?? []), stateDir]
    const root = typeof process.getuid === "function" && process.getuid() === 0
    const working = new Set<string>()

    const unavailable = (mode: string, reason: string) => new Errors.SandboxUnavailable({ mode, reason })

    /** bwrap, the seccomp file and the network tool of `network`, checked by one real start the first time. */
    const ready = (mode: ConfinedMode, network: Sandbox.NetworkMode) =>
      Effect.gen(function*() {
        const binary = resolveBinary(bwrap, process.env.PATH)
        if (binary._tag === "Missing") return yield* unavailable(mode, binary.reason)
        const filter = seccompFile()
        if ("failed" in filter) return yield* unavailable(mode, filter.failed)
        const emptyPath = emptyFile()
        if ("failed" in emptyPath) return yield* unavailable(mode, emptyPath.failed)
        let tool: NetworkTool | undefined
        if (network === "isolated") {
          const found = resolveNetworkTool(options.networkTool, process.env.PATH)
          if (found._tag === "Missing") return yield* unavailable(mode, found.reason)
          tool = found.tool
        }
        const key = `${binary.path}:${mode}:${network}:${tool?.path ?? ""}:${filter.path}`
        if (!working.has(key)) {
          // the launch's own command line (`bwrapArgs`), of an empty sandbox: the mode's filesystem over
          // the private directory as its workspace, and `/bin/sh -c :`
          const empty = launch({
            bwrap: binary.path,
            bwrapArgs: bwrapArgs({
              mode,
              network,
              asRoot: root,
              workspace: path.dirname(emptyPath.path),
              cwd: "/",
              file: "/bin/sh",
              args: ["-c", ":"],
              emptyFile: emptyPath.path
            }),
            seccompFile: filter.path,
            tool,
            root
          })
          yield* probe(empty).pipe(Effect.mapError((reason) => unavailable(mode, reason)))
          working.add(key)
        }
        return { bwrap: binary.path, seccomp: filter.path, empty: emptyPath.path, tool }
      })

    const workingDirectory = (mode: ConfinedMode, workspace: string, cwd: string) =>
      Effect.gen(function*() {
        const root = realDirectory(workspace)
        if (root === undefined) return yield* unavailable(mode, `the workspace ${workspace} is not a directory`)
        const real = realDirectory(path.resolve(root, cwd))
        if (real === undefined) {
          return yield* new Errors.InvalidInput({ field: "cwd", reason: `${cwd} is not an existing directory` })
        }
        if (!isWithin(root, real)) {
          return yield* new Errors.InvalidInput({
            field: "cwd",
            reason: `${cwd} is outside the workspace ${root} (the ${mode} sandbox keeps sessions inside it)`
          })
        }
        return { root, cwd: real }
      })

    const confine = (
      request: PtyBackend.SpawnRequest,
      requested: Sandbox.Policy
    ): Effect.Effect<Sandbox.Confinement, Errors.SandboxUnavailable | Errors.InvalidInput> =>
      Effect.gen(function*() {
        if (!Sandbox.isConfined(requested.mode)) return Sandbox.unconfined(request)
        const mode = requested.mode as ConfinedMode
        if (requested.workspace === undefined) return yield* unavailable(mode, "no workspace directory is configured")
        const where = yield* workingDirectory(mode, requested.workspace, request.cwd)
        const parts = yield* ready(mode, requested.network)
        const args = bwrapArgs({
          mode,
          network: requested.network,
          asRoot: root,
          workspace: where.root,
          cwd: where.cwd,
          file: request.file,
          args: request.args,
          masks: masksFor({ entries: denied, homes: homes(), workspace: where.root }),
          git: mode === "workspace-write" ? gitBinds(where.root) : [],
          nameResolution: nameResolutionFiles(),
          emptyFile: parts.empty
        })
        const launched = launch({
          bwrap: parts.bwrap,
          bwrapArgs: args,
          seccompFile: parts.seccomp,
          tool: parts.tool,
          root
        })
        const bwrapExe = realPath(parts.bwrap)
        return {
          request: { ...request, file: launched.file, args: launched.args, cwd: where.cwd },
          containment: "pid-namespace",
          attach: (process: PtyBackend.PtyProcess) =>
            locate(nodeLauncherView, process.pid, startTimeoutMs, bwrapExe).pipe(
              Effect.mapError((reason) => unavailable(mode, reason)),
              Effect.map((processes) => attach(nodeLauncherView, process, processes))
            )
        } satisfies Sandbox.Confinement
      }).pipe(
        Effect.withSpan("Bubblewrap.confine", { attributes: { mode: requested.mode, network: requested.network } })
      )

    return Sandbox.Sandbox.of({ policy, confine })
  })

const realPath = (file: string): string | undefined => {
  try {
    return fs.realpathSync(file)
  } catch {
    return undefined
  }
}

/**
 * The bubblewrap sandbox with `options` as every owner's default policy.
 *
 * @since 0.1.0
 */
export const layer = (options: Options): Layer.Layer<Sandbox.Sandbox, Errors.InvalidConfig> =>
  Layer.effect(Sandbox.Sandbox, make(options))
