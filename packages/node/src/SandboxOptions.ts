/**
 * What a sandbox is asked to be (`Options`), and the check of it into the default policy (`policyOf`): the
 * part of `Bubblewrap` a program that only passes a sandbox on (a client of the daemon) needs, without the
 * sandbox's launcher, seccomp filter and probes.
 *
 * @since 0.3.0
 */
import { Errors, Sandbox } from "@agent-terminal/core"
import * as Either from "effect/Either"
import * as fs from "node:fs"
import * as path from "node:path"

/**
 * The sandbox of a runtime: the default policy of every owner, and where bwrap is.
 *
 * @since 0.1.0
 */
export interface Options {
  readonly mode: Sandbox.Mode
  /**
   * The network of the confined modes: `off` (default), `isolated` or `host`. `true` and `false` are the
   * first version's spelling of `host` and `off`.
   */
  readonly network?: Sandbox.NetworkMode | boolean | undefined
  /** The workspace root: required by the confined modes (an existing directory). */
  readonly workspace?: string | undefined
  /** The bwrap binary: a path, or a name searched on the host's `PATH`. Default `"bwrap"`. */
  readonly bwrap?: string | undefined
  /** How long the program may take to appear inside the sandbox. Default 10000 ms. */
  readonly startTimeoutMs?: number | undefined
  /**
   * More paths masked in the confined modes, on top of `defaultDenyRead` and the state directory: absolute,
   * or `~/…` (every home directory: the user's and root's).
   */
  readonly denyRead?: ReadonlyArray<string> | undefined
  /** The project's state directory, masked too. Default `$AGENT_TERMINAL_STATE_DIR`, else `~/.agent-terminal`. */
  readonly stateDir?: string | undefined
  /** The network tool of `isolated`: `pasta`, `slirp4netns`, or a path. Default: pasta, else slirp4netns. */
  readonly networkTool?: string | undefined
}

/**
 * The network mode of the options (`true`/`false` are `host`/`off`).
 *
 * @since 0.2.0
 */
export const networkOf = (network: Options["network"]): Sandbox.NetworkMode =>
  network === true ? "host" : network === false || network === undefined ? "off" : network

/**
 * The real path of `dir` when it is an existing directory.
 *
 * @since 0.3.0
 */
export const realDirectory = (dir: string): string | undefined => {
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
    network: networkOf(options.network),
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
