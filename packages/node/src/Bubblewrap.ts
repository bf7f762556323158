/**
 * The bubblewrap sandbox (`bwrap`, what Codex and Claude Code use on Linux). A confined session's argv is
 * wrapped once — `bwrap <namespaces> <mounts> --chdir <cwd> -- <shell>` — inside the session's
 * containment, so the whole sandbox is in the session's cgroup. `read-only` and `workspace-write` run
 * without network unless it is enabled; `danger-full-access` runs the program as given. When bwrap is
 * missing or cannot create its namespaces, opening a confined session fails with `SandboxUnavailable` and
 * bwrap's reason — never an unconfined session in its place.
 *
 * @since 0.1.0
 */
import { Errors, type PtyBackend, Sandbox } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import type { ConfinedMode } from "./internal/bwrapArgs.js"
import { bwrapArgs, isWithin } from "./internal/bwrapArgs.js"
import { probe, resolveBinary } from "./internal/bwrapProbe.js"
import { attach, locate, nodeLauncherView } from "./internal/sandboxedProcess.js"

/**
 * The sandbox of a runtime: the default policy of every owner, and where bwrap is.
 *
 * @since 0.1.0
 */
export interface Options {
  readonly mode: Sandbox.Mode
  /** Network access in the confined modes. Default `false`. */
  readonly network?: boolean | undefined
  /** The workspace root: required by the confined modes (an existing directory). */
  readonly workspace?: string | undefined
  /** The bwrap binary: a path, or a name searched on the host's `PATH`. Default `"bwrap"`. */
  readonly bwrap?: string | undefined
  /** How long the program may take to appear inside the sandbox. Default 10000 ms. */
  readonly startTimeoutMs?: number | undefined
}

/**
 * The bwrap argv of one confined request (exported for documentation and tests).
 *
 * @since 0.1.0
 */
export const commandLine = (
  policy: { readonly mode: ConfinedMode; readonly network: boolean; readonly workspace: string },
  request: { readonly cwd: string; readonly file: string; readonly args: ReadonlyArray<string> }
): ReadonlyArray<string> => bwrapArgs({ ...policy, ...request })

const realDirectory = (dir: string): string | undefined => {
  try {
    const real = fs.realpathSync(dir)
    return fs.statSync(real).isDirectory() ? real : undefined
  } catch {
    return undefined
  }
}

/**
 * Check the options into the default policy: a confined mode needs an existing workspace directory, and
 * `workspace-write` cannot make `/` writable (that is `danger-full-access`).
 *
 * @since 0.1.0
 */
export const policyOf = (options: Options): Either.Either<Sandbox.Policy, Errors.InvalidConfig> =>
  Sandbox.validate({
    mode: options.mode,
    network: options.network ?? false,
    ...(options.workspace !== undefined ? { workspace: path.resolve(options.workspace) } : {})
  }).pipe(
    Either.flatMap((policy): Either.Either<Sandbox.Policy, Errors.InvalidConfig> => {
      if (!Sandbox.isConfined(policy.mode) || policy.workspace === undefined) return Either.right(policy)
      const real = realDirectory(policy.workspace)
      if (real === undefined) {
        return Either.left(
          new Errors.InvalidConfig({ field: "workspace", reason: `${policy.workspace} is not an existing directory` })
        )
      }
      if (real === "/" && policy.mode === "workspace-write") {
        return Either.left(
          new Errors.InvalidConfig({
            field: "workspace",
            reason: "workspace-write cannot make / writable; use danger-full-access"
          })
        )
      }
      return Either.right({ ...policy, workspace: real })
    })
  )

/**
 * The sandbox service over bwrap; `make` checks the options (`InvalidConfig`), the first confined open
 * checks bwrap itself.
 *
 * @since 0.1.0
 */
export const make = (options: Options): Effect.Effect<Sandbox.Sandbox["Type"], Errors.InvalidConfig> =>
  Effect.gen(function*() {
    const policy = yield* policyOf(options)
    const bwrap = options.bwrap ?? "bwrap"
    const startTimeoutMs = options.startTimeoutMs ?? 10_000
    const working = new Set<string>()

    const unavailable = (mode: string, reason: string) => new Errors.SandboxUnavailable({ mode, reason })

    const ready = (mode: ConfinedMode, network: boolean) =>
      Effect.gen(function*() {
        const binary = resolveBinary(bwrap, process.env.PATH)
        if (binary._tag === "Missing") return yield* unavailable(mode, binary.reason)
        const key = `${binary.path}:${network}`
        if (!working.has(key)) {
          yield* probe(binary.path, network).pipe(Effect.mapError((reason) => unavailable(mode, reason)))
          working.add(key)
        }
        return binary.path
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
        const binary = yield* ready(mode, requested.network)
        const args = bwrapArgs({
          mode,
          network: requested.network,
          workspace: where.root,
          cwd: where.cwd,
          file: request.file,
          args: request.args
        })
        return {
          request: { ...request, file: binary, args, cwd: where.cwd },
          containment: "pid-namespace",
          attach: (launched: PtyBackend.PtyProcess) =>
            locate(nodeLauncherView, launched.pid, startTimeoutMs).pipe(
              Effect.mapError((reason) => unavailable(mode, reason)),
              Effect.map((processes) => attach(nodeLauncherView, launched, processes))
            )
        } satisfies Sandbox.Confinement
      }).pipe(Effect.withSpan("Bubblewrap.confine", { attributes: { mode: requested.mode } }))

    return Sandbox.Sandbox.of({ policy, confine })
  })

/**
 * The bubblewrap sandbox with `options` as every owner's default policy.
 *
 * @since 0.1.0
 */
export const layer = (options: Options): Layer.Layer<Sandbox.Sandbox, Errors.InvalidConfig> =>
  Layer.effect(Sandbox.Sandbox, make(options))
