/**
 * `agent-terminal console`: a person drives a terminal session by hand and sees exactly what a model would
 * see. Every action is a real tool call through `ToolClient` (the path MCP uses): the call is shown with its
 * JSON arguments, then the rendered text result — the very text a model reads — and the structured fields.
 *
 * A plain line is sent as `text`; lines starting with `:` are console commands (`:help`). Ctrl-C does not
 * stop the console: it sends a real SIGINT to the session's foreground program (`terminal_signal`). Ctrl-D
 * or `:quit` leaves, closing every session the console opened.
 */
import { Portable, ToolClient } from "@agent-terminal/tools"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as readline from "node:readline"
import * as Daemon from "./Daemon.js"
import type * as McpOptions from "./McpOptions.js"
import * as NatsOptions from "./NatsOptions.js"
import * as Settings from "./Settings.js"

type Event = { readonly _tag: "Line"; readonly line: string } | { readonly _tag: "End" }

interface State {
  current: { readonly sessionId: string; readonly name: string } | undefined
  lastTask: string | undefined
  timeoutMs: number | undefined
  full: boolean
  busy: boolean
}

const tty = process.stdout.isTTY === true
const dim = (text: string) => tty ? `\x1b[2m${text}\x1b[0m` : text
const bold = (text: string) => tty ? `\x1b[1m${text}\x1b[0m` : text

const help = `Plain lines are typed into the current session (terminal_send text, then Enter).
  :keys K…           named keys: C-c Up Down Enter Tab Escape F1 M-x S-Tab … (terminal_send keys)
  :type TEXT         type without pressing Enter (submit: false)
  :paste TEXT        paste as one unit; \\n in TEXT is a newline
  :read [OFF] [N]    the transcript: N lines, OFF lines back from the newest (terminal_read)
  :signal SIG        INT TERM KILL TSTP CONT HUP QUIT to the foreground program (terminal_signal)
  :bg COMMAND        run in the background (terminal_send run_in_background), then :task / :kill
  :task [ID] [wait]  a background task's new output; "wait" blocks until it ends (task_output)
  :kill [ID]         stop a background task (task_kill)
  :exec COMMAND      a one-shot command without a session (exec); a long one becomes a task
  :timeout MS|off    deadline of the next sends (timeoutMs)
  :open [NAME [SHELL]]  open another shell (bash, zsh, fish, pwsh) and switch to it
  :use ID|NAME       switch session
  :list              your sessions (terminal_list)            :close [ID]    close a session
  :call TOOL {JSON}  any tool with JSON arguments             :tools         the tools and their parameters
  :full              show long structured fields in full     :quit          leave (Ctrl-D too)
  ::TEXT             type a line that starts with ":"
Ctrl-C sends SIGINT to the session's foreground program; it never stops the console.`

const abbreviate = (value: unknown, full: boolean): unknown => {
  if (full) return value
  if (typeof value === "string") return value.length > 72 ? `${value.slice(0, 40)}…(${value.length} chars)` : value
  if (Array.isArray(value)) {
    return value.length > 12
      ? [...value.slice(0, 6).map((item) => abbreviate(item, full)), `…(${value.length} items)`]
      : value.map((item) => abbreviate(item, full))
  }
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, abbreviate(item, full)]))
  }
  return value
}

const unescape = (text: string) =>
  text.replace(/\\(n|t|r|\\)/g, (_, c: string) => c === "n" ? "\n" : c === "t" ? "\t" : c === "r" ? "\r" : "\\")

const signalName = (name: string) => {
  const upper = name.toUpperCase()
  return upper.startsWith("SIG") ? upper : `SIG${upper}`
}

const words = (text: string) => text.trim().split(/\s+/).filter((word) => word !== "")

/** The console over a `ToolClient`, reading lines from this process's terminal. */
export const programWith = (farewell: string) =>
  Effect.gen(function*() {
    const tools = yield* ToolClient.ToolClient
    const events = yield* Mailbox.make<Event>()
    const interrupts = yield* Mailbox.make<void>()
    const state: State = { current: undefined, lastTask: undefined, timeoutMs: undefined, full: false, busy: false }
    const rl = yield* Effect.acquireRelease(
      Effect.sync(() =>
        readline.createInterface({
          input: process.stdin,
          output: process.stdout,
          terminal: process.stdin.isTTY === true,
          historySize: 500
        })
      ),
      (rl) => Effect.sync(() => rl.close())
    )
    rl.on("line", (line) => events.unsafeOffer({ _tag: "Line", line }))
    rl.on("close", () => events.unsafeOffer({ _tag: "End" }))
    rl.on("SIGINT", () => {
      if (!state.busy) {
        rl.write(null, { ctrl: true, name: "e" })
        rl.write(null, { ctrl: true, name: "u" })
      }
      interrupts.unsafeOffer(undefined)
    })

    const print = (text: string) => Effect.sync(() => process.stdout.write(`${text}\n`))
    const prompt = Effect.sync(() => {
      rl.setPrompt(state.current === undefined ? "(no session) › " : `${bold(state.current.name)} › `)
      rl.prompt(true)
    })

    /** One tool call, shown as the model makes it and as the model sees its result. */
    const call = (name: string, args: Record<string, unknown>) =>
      Effect.gen(function*() {
        yield* print(dim(`→ ${name} ${JSON.stringify(args)}`))
        const outcome = yield* tools.call(name, args)
        yield* print(outcome.text)
        yield* print(
          dim(
            `  ${outcome.isError ? "error" : "structured"}: ${
              JSON.stringify(abbreviate(outcome.structured, state.full))
            }`
          )
        )
        return outcome
      })

    const needSession = <A>(use: (sessionId: string) => Effect.Effect<A>) =>
      state.current === undefined ? print("no session: :open one (or :use ID)") : use(state.current.sessionId)

    const send = (request: Record<string, unknown>) =>
      needSession((sessionId) =>
        Effect.gen(function*() {
          const outcome = yield* call("terminal_send", {
            sessionId,
            ...request,
            ...(state.timeoutMs === undefined ? {} : { timeoutMs: state.timeoutMs })
          })
          if (typeof outcome.structured.taskId === "string") state.lastTask = outcome.structured.taskId
        })
      )

    const open = (name: string | undefined, shell?: string) =>
      Effect.gen(function*() {
        const outcome = yield* call("terminal_open", {
          ...(name === undefined ? {} : { name }),
          ...(shell === undefined ? {} : { shell })
        })
        if (!outcome.isError) {
          state.current = { sessionId: String(outcome.structured.sessionId), name: String(outcome.structured.name) }
        }
      })

    const use = (key: string) =>
      Effect.gen(function*() {
        const listed = yield* tools.call("terminal_list", {})
        const sessions = (listed.structured.sessions ?? []) as ReadonlyArray<{ sessionId: string; name: string }>
        const found = sessions.find((session) => session.sessionId === key || session.name === key)
        if (found === undefined) return yield* print(`no session ${key} (:list shows yours)`)
        state.current = { sessionId: found.sessionId, name: found.name }
      })

    const command = (line: string) => {
      const [head = "", ...rest] = words(line.slice(1))
      const argument = line.slice(1).trim().slice(head.length).trim()
      switch (head) {
        case "help":
        case "h":
        case "?":
          return print(help)
        case "keys":
          return send({ keys: rest })
        case "type":
          return send({ text: unescape(argument), submit: false })
        case "paste":
          return send({ paste: unescape(argument) })
        case "read":
          return needSession((sessionId) =>
            call("terminal_read", {
              sessionId,
              ...(rest[0] === undefined ? {} : { offset: Number(rest[0]) }),
              ...(rest[1] === undefined ? {} : { count: Number(rest[1]) })
            })
          )
        case "signal":
          return needSession((sessionId) =>
            call("terminal_signal", { sessionId, signal: signalName(rest[0] ?? "INT") })
          )
        case "bg":
          return send({ text: argument, run_in_background: true })
        case "task": {
          const wait = rest.includes("wait")
          const taskId = rest.find((word) => word !== "wait") ?? state.lastTask
          if (taskId === undefined) return print("no background task yet (:bg COMMAND starts one)")
          return call("task_output", { taskId, ...(wait ? { wait: true } : {}) })
        }
        case "kill": {
          const taskId = rest[0] ?? state.lastTask
          if (taskId === undefined) return print("no background task yet (:bg COMMAND starts one)")
          return call("task_kill", { taskId })
        }
        case "exec":
          return call("exec", { command: argument }).pipe(Effect.tap((outcome) =>
            Effect.sync(() => {
              if (typeof outcome.structured.taskId === "string") state.lastTask = outcome.structured.taskId
            })
          ))
        case "timeout":
          return Effect.sync(() => {
            state.timeoutMs = rest[0] === undefined || rest[0] === "off" ? undefined : Number(rest[0])
          }).pipe(Effect.zipRight(print(`timeoutMs: ${state.timeoutMs ?? "default"}`)))
        case "open":
          return open(rest[0], rest[1])
        case "use":
          return rest[0] === undefined ? print(":use ID|NAME") : use(rest[0])
        case "list":
          return call("terminal_list", {})
        case "close": {
          const sessionId = rest[0] ?? state.current?.sessionId
          if (sessionId === undefined) return print("no session to close")
          return call("terminal_close", { sessionId }).pipe(Effect.tap(() =>
            Effect.sync(() => {
              if (state.current?.sessionId === sessionId) state.current = undefined
            })
          ))
        }
        case "call": {
          const [tool = "", ...json] = rest
          const text = json.join(" ").trim()
          let args: unknown = {}
          try {
            args = text === "" ? {} : JSON.parse(text)
          } catch {
            return print(`:call ${tool}: the arguments are not JSON`)
          }
          return call(tool, args as Record<string, unknown>)
        }
        case "tools":
          return print(
            Portable.toolDefinitions().map((tool) =>
              `${tool.name}(${Object.keys((tool.inputSchema.properties ?? {}) as object).join(", ")})`
            ).join("\n")
          )
        case "full":
          return Effect.sync(() => {
            state.full = !state.full
          }).pipe(Effect.zipRight(print(`long structured fields: ${state.full ? "in full" : "abbreviated"}`)))
        default:
          return print(`unknown command :${head} (:help lists them)`)
      }
    }

    const handle = (line: string) =>
      line.startsWith("::")
        ? send({ text: line.slice(1) })
        : line.startsWith(":")
        ? command(line)
        : send({ text: line })

    yield* interrupts.take.pipe(
      Effect.flatMap(() =>
        Effect.gen(function*() {
          yield* print("^C")
          yield* needSession((sessionId) => call("terminal_signal", { sessionId, signal: "SIGINT" }))
          if (!state.busy) yield* prompt
        })
      ),
      Effect.forever,
      Effect.forkScoped
    )

    yield* print(
      `agent-terminal console — what you type goes through the same tool calls a model makes. ${
        dim(":help for commands; Ctrl-C interrupts the session's program; Ctrl-D or :quit leaves.")
      }`
    )
    yield* open(undefined)
    while (true) {
      state.busy = false
      yield* prompt
      const event = yield* events.take
      if (event._tag === "End") break
      const line = event.line
      if (line.trim() === ":quit" || line.trim() === ":q" || line.trim() === ":exit") break
      state.busy = true
      yield* handle(line)
    }
    yield* print(farewell)
  }).pipe(Effect.scoped)

/** The console: its sessions are closed when it leaves. */
export const program = programWith("closing the console's sessions…")

/** `agent-terminal console [--daemon [auto]] [settings…] [sandbox…]`. */
export const run = (
  parsed:
    & McpOptions.SettingsOptions
    & McpOptions.SandboxOptions
    & Daemon.ClientOptions
    & Partial<NatsOptions.ConnectionOptions>
) =>
  Settings.withSettings(parsed, (settings, input) =>
    Settings.withSandbox(parsed, (sandbox) => {
      const servers = parsed.nats === undefined
        ? undefined
        : NatsOptions.serversOf(parsed as NatsOptions.ConnectionOptions)
      if (servers !== undefined) {
        // the terminals of the fleet's machines (an anonymous owner's close with the console)
        const fleet = Layer.unwrapEffect(Effect.map(
          Effect.promise(() => import("./FleetClient.js")),
          (FleetClient) =>
            FleetClient.fleetLayer(parsed as NatsOptions.ConnectionOptions, servers, parsed.owner, "console")
        ))
        const client = ToolClient.layer({ maxResultBytes: settings.maxResultBytes, owner: "console" })
        return program.pipe(
          Effect.provide(client.pipe(Layer.provide(fleet))),
          Effect.catchTags({
            NatsUnavailable: (error) => Settings.daemonRefused(error.message),
            NotPermitted: (error) => Settings.daemonRefused(error.message)
          }),
          Effect.provide(Settings.stderrLogger)
        )
      }
      if (!parsed.daemon) {
        const client = ToolClient.layer({ maxResultBytes: settings.maxResultBytes, owner: "console" })
        return program.pipe(
          Effect.provide(client.pipe(Layer.provide(Settings.terminalLayer(settings, sandbox)))),
          Effect.provide(Settings.stderrLogger)
        )
      }
      const named = Option.getOrUndefined(parsed.owner)
      const farewell = named === undefined
        ? "closing the console's sessions…"
        : `leaving: the daemon keeps owner ${named}'s sessions (agent-terminal console --daemon --owner ${named} finds them)`
      // through the daemon, the console acts as the owner its connection is bound to
      const client = Layer.unwrapEffect(
        Effect.map(
          Daemon.connectedOwner,
          (owner) => ToolClient.layer({ maxResultBytes: settings.maxResultBytes, owner })
        )
      )
      return programWith(farewell).pipe(
        Effect.provide(client.pipe(Layer.provide(Daemon.remoteLayer(parsed, input, sandbox, "console")))),
        Effect.catchTags({
          DaemonUnavailable: (error) => Settings.daemonRefused(error.message),
          ProtocolMismatch: (error) => Settings.daemonRefused(error.message),
          OwnerRejected: (error) => Settings.daemonRefused(error.message),
          SandboxInUse: (error) => Settings.daemonRefused(error.message),
          InvalidConfig: (error) => Settings.daemonRefused(error.message)
        }),
        Effect.provide(Settings.stderrLogger)
      )
    }))
