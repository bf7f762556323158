/**
 * A measurement in a fresh forked node: the script (a module beside this one) sends one report over IPC
 * and exits. Nothing else of the run is in its number — no other group's heap, and no type feedback from
 * other code run through the same functions (the library over a real pty made its in-memory path slower
 * in the bench process than alone: docs/performance.md).
 */
import * as Effect from "effect/Effect"
import * as childProcess from "node:child_process"
import { fileURLToPath } from "node:url"

/** `module`, a bench script beside this one (e.g. `"./MemoryChild.js"`), in a forked node with an IPC channel. */
export const fork = (
  module: string,
  args: ReadonlyArray<string>,
  execArgv: ReadonlyArray<string> = []
): childProcess.ChildProcess =>
  childProcess.fork(fileURLToPath(new URL(module, import.meta.url)), [...args], {
    execArgv: [...execArgv],
    stdio: ["ignore", "ignore", "inherit", "ipc"]
  })

/** The report of `module` run with `args`; it fails if none came before the exit. */
export const report = <A>(
  module: string,
  args: ReadonlyArray<string>,
  execArgv: ReadonlyArray<string> = []
): Effect.Effect<A, Error> =>
  Effect.async<A, Error>((resume) => {
    const forked = fork(module, args, execArgv)
    let received: { readonly value: A } | undefined
    forked.on("message", (message) => (received = { value: message as A }))
    forked.on("exit", (code) =>
      resume(
        received !== undefined
          ? Effect.succeed(received.value)
          : Effect.fail(new Error(`${module} ${args.join(" ")} exited with ${code} without a report`))
      ))
    return Effect.sync(() => forked.kill("SIGKILL"))
  })
