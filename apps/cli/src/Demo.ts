/**
 * `agent-terminal demo`: one session, driven the way an agent would drive it, each step printed with its
 * output, why it returned, the exit code and how long it took.
 */
import { Ids, PtyService, type Session, type TerminalConfig } from "@agent-terminal/core"
import { type Bubblewrap, NodeTerminal } from "@agent-terminal/node"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"

const owner = Ids.OwnerId.make("demo")

const indent = (text: string) =>
  text === "" ? "    (no output)" : text.split("\n").map((line) => `    │ ${line}`).join("\n")

const facts = (result: Session.SendResult) =>
  [
    `wait: ${result.waitReason}`,
    result.exitCode !== undefined ? `exit: ${result.exitCode}` : undefined,
    `${result.elapsedMs} ms`
  ].filter((fact) => fact !== undefined).join("  ")

const step = (
  service: PtyService.PtyService["Type"],
  id: Ids.SessionId,
  title: string,
  request: Session.SendRequest
) =>
  Effect.gen(function*() {
    const shown = request.text ?? (request.keys ? `keys ${request.keys.join(" ")}` : request.paste ?? "")
    yield* Console.log(`\n▸ ${title}\n  $ ${shown}`)
    const result = yield* service.send(owner, id, request)
    yield* Console.log(indent(result.output))
    yield* Console.log(`  → ${facts(result)}`)
    return result
  })

const program = Effect.gen(function*() {
  const service = yield* PtyService.PtyService
  yield* Console.log("agent-terminal demo: a persistent bash session, driven as an agent would drive it")
  const clock = yield* Effect.clock
  const started = clock.unsafeCurrentTimeMillis()
  const session = yield* service.open(owner, { name: "demo" })
  const id = Ids.SessionId.make(session.sessionId)
  yield* Console.log(`\n▸ open: session ${session.sessionId} (bash pid ${session.pid}, ${session.containment})`)
  yield* Console.log(indent(session.motd))
  yield* Console.log(`  → ready at the prompt in ${clock.unsafeCurrentTimeMillis() - started} ms`)

  yield* step(service, id, "state persists: change directory and export a variable", {
    text: "cd /tmp && export GREETING=hello"
  })
  yield* step(service, id, "…and the next send sees both", { text: "echo \"$PWD says $GREETING\"" })
  yield* step(service, id, "exit codes come from the shell itself", { text: "false" })
  yield* step(service, id, "a subshell's status", { text: "(exit 7)" })
  yield* step(service, id, "a pipeline reports its last command's status", { text: "printf 'a\\nb\\n' | grep -c a" })
  yield* step(service, id, "start a Python REPL: no shell prompt, the REPL waits reading the terminal", {
    text: "python3 -q"
  })
  yield* step(service, id, "a line for the REPL", { text: "print(6 * 7)" })
  yield* step(service, id, "leave the REPL: back at the shell prompt", { text: "exit()" })
  yield* step(service, id, "a long command: stop waiting after 1 s (nothing is killed)", {
    text: "sleep 30",
    timeoutMs: 1000
  })
  yield* Console.log("\n▸ interrupt it: SIGINT to the terminal's foreground process group")
  const signalled = yield* service.signal(owner, id, "SIGINT")
  yield* Console.log(`  → delivered: ${signalled.delivered}, process group ${signalled.targetPgid}`)
  yield* step(service, id, "the shell is back and reports the interrupt", { text: "echo back at the prompt" })
  const closed = yield* service.close(owner, id)
  yield* Console.log(`\n▸ close: ${closed.outcome}, survivors: ${closed.survivors.length}`)
  const left = yield* service.list(owner)
  yield* Console.log(`  → open sessions now: ${left.length}`)
}).pipe(Effect.scoped)

/** Run the demo against a real bash on this machine, in the sandbox if one is given. */
export const run = (sandbox?: Bubblewrap.Options, config: TerminalConfig.TerminalConfigInput = {}) =>
  program.pipe(Effect.provide(NodeTerminal.layer(config, sandbox === undefined ? {} : { sandbox })))
