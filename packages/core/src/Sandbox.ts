/**
 * What a session's processes may touch: the filesystem (read-only, the workspace writable, or everything),
 * the network, the host's other processes. A `Sandbox` turns the spawn request of a session into the
 * confined one — or refuses with `SandboxUnavailable` and the reason; it never falls back to running
 * unconfined. The no-sandbox layer (`layerNone`) is here; the bubblewrap layer lives in
 * `@agent-terminal/node`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { SpawnFailed } from "./Errors.js"
import { InvalidConfig, SandboxUnavailable } from "./Errors.js"
import type { InvalidInput } from "./Errors.js"
import type { OwnerId } from "./Ids.js"
import type { Containment, PtyProcess, SpawnRequest } from "./PtyBackend.js"

/**
 * - `read-only`: the whole filesystem is visible and nothing can be written.
 * - `workspace-write`: the workspace root is writable, the rest read-only (`/tmp` is private to the session).
 * - `danger-full-access`: no confinement at all.
 *
 * @since 0.1.0
 */
export const Mode = Schema.Literal("read-only", "workspace-write", "danger-full-access")

/**
 * @since 0.1.0
 */
export type Mode = typeof Mode.Type

/**
 * The modes, in the order of the confinement they give (most first).
 *
 * @since 0.1.0
 */
export const modes: ReadonlyArray<Mode> = Mode.literals

/**
 * The network of a confined session:
 *
 * - `off`: its own network namespace with only a loopback interface of its own: nothing outside is reachable.
 * - `isolated`: its own network namespace with outbound connectivity through a user-mode network stack on the
 *   host (`pasta`, else `slirp4netns`): the internet and other machines are reachable, the host's loopback
 *   services (databases, the server's own port, abstract Unix sockets) are not.
 * - `host`: the host's network namespace, loopback services and abstract Unix sockets included.
 *
 * @since 0.2.0
 */
export const NetworkMode = Schema.Literal("off", "isolated", "host")

/**
 * @since 0.2.0
 */
export type NetworkMode = typeof NetworkMode.Type

/**
 * The network modes, most confined first.
 *
 * @since 0.2.0
 */
export const networkModes: ReadonlyArray<NetworkMode> = NetworkMode.literals

/**
 * How an owner's sessions are confined. `network` only matters in the confined modes (in
 * `danger-full-access` the network is the host's). `workspace` is the root a confined session may write
 * under (`workspace-write`), its default working directory, and the bound of any `cwd` it asks for.
 *
 * @since 0.1.0
 */
export const Policy = Schema.Struct({
  mode: Mode,
  network: NetworkMode,
  workspace: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 */
export type Policy = typeof Policy.Type

/**
 * No confinement.
 *
 * @since 0.1.0
 */
export const fullAccess: Policy = { mode: "danger-full-access", network: "host" }

/**
 * Whether the mode confines the session (anything but `danger-full-access`).
 *
 * @since 0.1.0
 */
export const isConfined = (mode: Mode): boolean => mode !== "danger-full-access"

/**
 * Two policies give the same confinement.
 *
 * @since 0.1.0
 */
export const equivalent = (a: Policy, b: Policy): boolean =>
  a.mode === b.mode && (!isConfined(a.mode) || (a.network === b.network && a.workspace === b.workspace))

/**
 * Check a policy: a confined mode needs an absolute workspace root.
 *
 * @since 0.1.0
 */
export const validate = (policy: Policy): Either.Either<Policy, InvalidConfig> => {
  if (!isConfined(policy.mode)) return Either.right(policy)
  if (policy.workspace === undefined || policy.workspace === "") {
    return Either.left(
      new InvalidConfig({ field: "workspace", reason: `the ${policy.mode} sandbox needs a workspace directory` })
    )
  }
  if (!policy.workspace.startsWith("/")) {
    return Either.left(
      new InvalidConfig({ field: "workspace", reason: `must be an absolute path, got ${policy.workspace}` })
    )
  }
  return Either.right(policy)
}

/**
 * A spawn request made confined: spawn `request`, then hand the spawned process to `attach`, which
 * returns the session's program as the service must see it (its `pid` is the program inside the
 * sandbox, not the sandbox's launcher; its `terminate` ends everything inside) or fails when the sandbox
 * did not come up.
 *
 * @since 0.1.0
 */
export interface Confinement {
  readonly request: SpawnRequest
  /**
   * The containment the sandbox itself gives, when it gives one: `pid-namespace` (killing the namespace's
   * init ends every process inside, daemons too). `undefined`: the backend's containment alone.
   */
  readonly containment: Containment | undefined
  readonly attach: (process: PtyProcess) => Effect.Effect<PtyProcess, SpawnFailed | SandboxUnavailable>
}

/**
 * Nothing to confine: the request as given, the process as spawned.
 *
 * @since 0.1.0
 */
export const unconfined = (request: SpawnRequest): Confinement => ({
  request,
  containment: undefined,
  attach: Effect.succeed
})

/**
 * @since 0.1.0
 */
export class Sandbox extends Context.Tag("@agent-terminal/core/Sandbox")<
  Sandbox,
  {
    /** The policy of every owner that was not given its own (`PtyService.configureSandbox`). */
    readonly policy: Policy
    /**
     * The confined form of a spawn request under `policy`. Fails with `SandboxUnavailable` (and the
     * reason) when the policy cannot be applied here, and with `InvalidInput` (field `cwd`) when a
     * confined session asks for a working directory outside the workspace. Never runs anything unconfined
     * in place of a confined request.
     */
    readonly confine: (
      request: SpawnRequest,
      policy: Policy
    ) => Effect.Effect<Confinement, SandboxUnavailable | InvalidInput>
  }
>() {}

/**
 * The sandbox policy each owner's processes are started under now (what `PtyService.sandboxOf` answers), for
 * the services that start an owner's processes outside a session (one-shot runs). `PtyService.layer`
 * provides it over its own owners' policies.
 *
 * @since 0.4.0
 */
export class OwnerPolicies extends Context.Tag("@agent-terminal/core/Sandbox/OwnerPolicies")<
  OwnerPolicies,
  { readonly policyOf: (owner: OwnerId) => Effect.Effect<Policy> }
>() {}

/**
 * An owner asked for another sandbox policy while it has open (or opening) sessions. Not a tool error:
 * only the embedding application sets policies, never the model.
 *
 * @since 0.1.0
 */
export class SandboxInUse extends Schema.TaggedError<SandboxInUse>("@agent-terminal/SandboxInUse")(
  "SandboxInUse",
  { owner: Schema.String, current: Mode, requested: Mode, sessions: Schema.Number }
) {
  override get message() {
    return `owner ${this.owner} has ${this.sessions} open or opening session(s) in the ${this.current} sandbox; ` +
      `close them before switching to ${this.requested}`
  }
}

/**
 * No sandbox on this host: `danger-full-access` is the default policy, and a confined policy fails every
 * open with `SandboxUnavailable` (never a silent fallback).
 *
 * @since 0.1.0
 */
export const layerNone: Layer.Layer<Sandbox> = Layer.succeed(
  Sandbox,
  Sandbox.of({
    policy: fullAccess,
    confine: (request, policy) =>
      isConfined(policy.mode)
        ? Effect.fail(
          new SandboxUnavailable({
            mode: policy.mode,
            reason: "no sandbox is configured in this runtime (Sandbox.layerNone); provide the bubblewrap layer"
          })
        )
        : Effect.succeed(unconfined(request))
  })
)
