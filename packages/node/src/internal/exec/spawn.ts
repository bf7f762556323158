/**
 * A run's program started in its own scope (its teardown), under the owner's sandbox policy and the shared
 * environment policy: on pipes (child mode) or on a pty of the backend (pty mode).
 */
import {
  EnvPolicy,
  Exec,
  type Ids,
  type ProcessInspector,
  type PtyBackend,
  Sandbox,
  Session,
  type TerminalConfig
} from "@agent-terminal/core"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Teardown from "../../Teardown.js"
import { spawnChild } from "./child.js"
import { spawnPty } from "./pty.js"

/** What a spawn runs over, gathered once by the supervisor. */
export interface SpawnDeps {
  readonly config: TerminalConfig.TerminalConfig
  readonly backend: PtyBackend.PtyBackend["Type"]
  readonly inspector: ProcessInspector.ProcessInspector["Type"]
  readonly sandbox: Sandbox.Sandbox["Type"]
  readonly environment: EnvPolicy.HostEnvironment["Type"]
  readonly policies: Sandbox.OwnerPolicies["Type"]
  readonly containment: Context.Context<Teardown.Cgroups | Teardown.HostExit>
}

/** Spawn a run (in the caller's scope, which becomes its teardown). */
export const spawnRun = (deps: SpawnDeps, owner: Ids.OwnerId, request: Exec.ExecRequest, label: string) =>
  Effect.gen(function*() {
    const { config, environment } = deps
    const policy = yield* deps.policies.policyOf(owner)
    const confined = Sandbox.isConfined(policy.mode) && policy.workspace !== undefined
    const cwd = request.cwd ?? (confined ? policy.workspace! : config.defaultCwd ?? environment.cwd)
    const argv = request.spawn._tag === "child"
      ? request.spawn.argv
      : Exec.shellArgv(config.shell, request.spawn.command)
    const confinement = yield* deps.sandbox.confine({
      file: argv[0],
      args: argv.slice(1),
      cwd,
      env: EnvPolicy.build({ host: environment.host, trusted: environment.trusted }),
      cols: config.cols,
      rows: config.rows,
      label,
      disposeGraceMs: config.disposeGraceMs,
      limits: { pidsMax: config.pidsMax, memoryMaxBytes: config.memoryMaxBytes }
    }, policy)
    const confinedRequest = confinement.request
    if (request.spawn._tag === "child") {
      // On pipes the sandbox's launcher is the spawned process: its whole tree is the run's containment
      // (cgroup or sweep), so `attach` (which finds the program's pid on a pty) is not needed.
      return yield* spawnChild({
        argv: [confinedRequest.file, ...confinedRequest.args],
        cwd: confinedRequest.cwd,
        env: confinedRequest.env,
        label,
        graceMs: config.disposeGraceMs,
        limits: confinedRequest.limits,
        budget: Session.outputRoom(config.maxResultBytes),
        maxLines: config.scrollbackLines,
        maxBytes: config.scrollbackMaxBytes
      }).pipe(Effect.provide(deps.containment))
    }
    return yield* spawnPty(deps.backend, deps.inspector, confinedRequest, confinement.attach, {
      budget: Session.outputRoom(config.maxResultBytes),
      scrollbackLines: config.scrollbackLines,
      scrollbackMaxBytes: config.scrollbackMaxBytes,
      cols: config.cols,
      rows: config.rows
    })
  })
