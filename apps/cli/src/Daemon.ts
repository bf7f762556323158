/**
 * The client side of the daemon for `mcp --daemon` and `console --daemon`: the options (`--daemon`,
 * `--socket`, `--owner`, the owner's secret), the remote layer over them, and `--daemon auto`, which starts
 * the daemon detached when none answers (the way tmux starts its server) and waits until it does.
 */
import { Errors, PtyService, type TerminalConfig } from "@agent-terminal/core"
import { Paths, Protocol, RemoteTerminal } from "@agent-terminal/daemon"
import { type Bubblewrap, SandboxOptions, StateFiles } from "@agent-terminal/node"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { ClientOptions } from "./DaemonOptions.js"

export { autoArgument, type ClientOptions, clientOptions, socketOption } from "./DaemonOptions.js"

const answers = (socket: string) =>
  Effect.async<boolean>((resume) => {
    const connection = net.createConnection({ path: socket })
    connection.once("connect", () => {
      connection.destroy()
      resume(Effect.succeed(true))
    })
    connection.once("error", () => resume(Effect.succeed(false)))
    return Effect.sync(() => connection.destroy())
  })

/** The settings of the client, as the environment variables a daemon it starts reads them from. */
const settingsEnv = (input: TerminalConfig.TerminalConfigInput): Record<string, string> => {
  const names: Record<string, string> = {
    timeoutMs: "AGENT_TERMINAL_TIMEOUT_MS",
    idleSilenceMs: "AGENT_TERMINAL_IDLE_SILENCE_MS",
    openTimeoutMs: "AGENT_TERMINAL_OPEN_TIMEOUT_MS",
    disposeGraceMs: "AGENT_TERMINAL_DISPOSE_GRACE_MS",
    maxResultBytes: "AGENT_TERMINAL_MAX_RESULT_BYTES",
    maxReadBytes: "AGENT_TERMINAL_MAX_READ_BYTES",
    scrollbackLines: "AGENT_TERMINAL_SCROLLBACK_LINES",
    scrollbackMaxBytes: "AGENT_TERMINAL_SCROLLBACK_MAX_BYTES",
    cols: "AGENT_TERMINAL_COLS",
    rows: "AGENT_TERMINAL_ROWS",
    shell: "AGENT_TERMINAL_SHELL",
    defaultCwd: "AGENT_TERMINAL_CWD"
  }
  return Object.fromEntries(
    Object.entries(input).flatMap(([key, value]) =>
      names[key] === undefined || value === undefined ? [] : [[names[key], String(value)]]
    )
  )
}

/** The most of a daemon's log read back for its first error. */
const MAX_LOG_READ = 64 * 1024

/**
 * The first line of what a daemon wrote to its log since `from` that says what went wrong (an error, a
 * refusal), else its first line: what a client that started it shows for a daemon that did not start.
 */
export const firstErrorLine = (text: string): string | undefined => {
  const lines = text.split("\n").map((line) => line.trim()).filter((line) => line !== "")
  const error = lines.find((line) => /error|cannot|refused|invalid|denied|not found/i.test(line))
  const found = error ?? lines[0]
  return found === undefined ? undefined : found.length > 300 ? `${found.slice(0, 300)}…` : found
}

const logSince = (file: string, from: number): string => {
  try {
    const fd = fs.openSync(file, "r")
    try {
      const buffer = Buffer.alloc(MAX_LOG_READ)
      const n = fs.readSync(fd, buffer, 0, buffer.length, from)
      return buffer.toString("utf8", 0, n)
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    return ""
  }
}

/**
 * Start `agent-terminal serve` on `socket`, detached (its own session; its log — and its stderr, so a crash
 * at its start is there too — in the state directory), unless a daemon answers there already; then wait until
 * one answers. A daemon that exits first (a native module built for another Node version, a refused setting)
 * fails the wait at once, with the first line of its error in the message. Two clients starting one at once
 * are fine: the second daemon finds the socket taken and exits, and the first one answers.
 */
export const ensureDaemon = (socket: string, input: TerminalConfig.TerminalConfigInput) =>
  Effect.gen(function*() {
    if (yield* answers(socket)) return
    const bin = path.join(path.dirname(fileURLToPath(import.meta.url)), "bin.js")
    const logFile = path.join(Paths.stateDir(), "daemon.log")
    StateFiles.makeDirectory(path.dirname(logFile), 0o700)
    yield* Effect.logInfo(`agent-terminal: starting the daemon on ${socket} (log: ${logFile})`)
    const log = fs.openSync(logFile, "a", 0o600)
    const from = fs.fstatSync(log).size
    const exited = yield* Deferred.make<string>()
    try {
      const child = spawn(process.execPath, [bin, "serve", "--socket", socket, "--log-file", logFile], {
        detached: true,
        stdio: ["ignore", "ignore", log],
        env: { ...process.env, ...settingsEnv(input) }
      })
      child.once("exit", (code, signal) =>
        Deferred.unsafeDone(exited, Exit.succeed(signal !== null ? `by ${signal}` : `with ${code}`)))
      child.once("error", (error) =>
        Deferred.unsafeDone(exited, Exit.succeed(`to start: ${error.message}`)))
      child.unref()
    } finally {
      fs.closeSync(log)
    }
    const up = answers(socket).pipe(
      Effect.repeat({ until: (ok) => ok, schedule: Schedule.passthrough(Schedule.spaced(50)) }),
      Effect.as(undefined)
    )
    const gone = Effect.flatMap(Deferred.await(exited), (how) =>
      // another client's daemon may have taken the socket meanwhile: then this one's exit is no failure
      Effect.map(answers(socket), (ok) => ok ? undefined : how))
    const outcome = yield* Effect.raceFirst(up, gone).pipe(Effect.timeoutOption(20_000))
    if (Option.isSome(outcome) && outcome.value === undefined) return
    const first = firstErrorLine(logSince(logFile, from))
    return yield* new Protocol.DaemonUnavailable({
      socket,
      reason: Option.isNone(outcome)
        ? `the daemon started for it did not answer within 20 s${
          first === undefined ? "" : `: ${first}`
        } (see ${logFile})`
        : `the daemon started for it exited ${outcome.value} before answering${
          first === undefined ? "" : `: ${first}`
        } (see ${logFile})`
    })
  })

/** The most a secret file may hold (a secret is at most 1024 characters: `Protocol.OwnerCredential`). */
const MAX_SECRET_FILE_BYTES = 4096

/**
 * The secret in `file`: none when there is no such file (a first use: the daemon issues one); a file that is
 * there and cannot be read, holds nothing, or holds more than a secret can be, is an error — connecting
 * without its secret would register the name anew or be refused, and say nothing of the file. The read is
 * bounded and does not wait: a device like `/dev/zero` is refused after 4 KiB, a FIFO without a writer is
 * not waited for.
 */
const readSecret = (file: string): Effect.Effect<string | undefined, Errors.InvalidConfig> =>
  Effect.suspend(() => {
    const refused = (reason: string) => Effect.fail(new Errors.InvalidConfig({ field: "ownerSecretFile", reason }))
    let secret: string
    try {
      const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
      try {
        const buffer = Buffer.alloc(MAX_SECRET_FILE_BYTES + 1)
        let length = 0
        for (let n = -1; n !== 0 && length < buffer.length; length += n) {
          n = fs.readSync(fd, buffer, length, buffer.length - length, null)
        }
        if (length > MAX_SECRET_FILE_BYTES) {
          return refused(`${file} holds more than ${MAX_SECRET_FILE_BYTES} bytes: it is not a secret`)
        }
        secret = buffer.toString("utf8", 0, length).trim()
      } finally {
        fs.closeSync(fd)
      }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === "ENOENT") return Effect.succeed(undefined)
      return refused(`${file} cannot be read (${code ?? String(error)})`)
    }
    return secret === "" ? refused(`${file} is empty`) : Effect.succeed(secret)
  })

/**
 * The owner the remote layer's connection is bound to: the owner every call through it acts as.
 */
export const connectedOwner = Effect.map(RemoteTerminal.Connected, (connected) => connected.owner)

/**
 * The owner credential the options and the environment give, and where an issued secret is kept: in the
 * `--owner-secret-file` given (when it does not exist yet), else — unless the secret is in the environment —
 * in `<state dir>/owners/<name>.secret`.
 */
export const credentialOf = (options: ClientOptions) =>
  Effect.gen(function*() {
    const name = Option.getOrUndefined(options.owner)
    if (name === undefined) return { owner: undefined, keep: undefined }
    const configured = Option.getOrUndefined(options.ownerSecretFile)
    const environment = process.env.AGENT_TERMINAL_OWNER_SECRET || undefined
    const file = configured ?? (environment === undefined ? Paths.ownerSecretPath(name) : undefined)
    const secret = file === undefined ? environment : yield* readSecret(file)
    return { owner: { name, ...(secret === undefined ? {} : { secret }) }, keep: file }
  })

const keepSecret = (file: string) => (secret: string) =>
  Effect.sync(() => {
    StateFiles.privateDirectory(path.dirname(file))
    // a new file, never through a link (O_EXCL): the secret was issued because none was there
    const fd = StateFiles.openPrivate(file, fs.constants.O_CREAT | fs.constants.O_EXCL)
    try {
      fs.writeSync(fd, `${secret}\n`)
    } finally {
      fs.closeSync(fd)
    }
  }).pipe(Effect.zipRight(Effect.logInfo(`agent-terminal: the daemon issued this owner's secret; kept in ${file}`)))

/**
 * The terminal services of the daemon (`PtyService`, `TaskRuntime`, `Exec`) for these options: the daemon is
 * started first with `--daemon auto`; the owner's sandbox policy is set when sandbox options were given.
 */
export const remoteLayer = (
  options: ClientOptions,
  input: TerminalConfig.TerminalConfigInput,
  sandbox: Bubblewrap.Options | undefined,
  client: string
) => {
  const socket = Option.getOrElse(options.socket, () => Paths.socketPath())
  const auto = options.auto !== undefined && Option.isSome(options.auto)
  const remote = Layer.unwrapEffect(Effect.map(credentialOf(options), ({ keep, owner }) =>
    RemoteTerminal.layer({
      socket,
      owner,
      client,
      ...(keep === undefined ? {} : { onIssuedSecret: keepSecret(keep) })
    })))
  const started = auto ? Layer.effectDiscard(ensureDaemon(socket, input)) : Layer.empty
  const configured = sandbox === undefined ? Layer.empty : Layer.effectDiscard(
    Effect.gen(function*() {
      // The masks and the network tool are the daemon's own bubblewrap settings, not an owner's policy: asked
      // for here they would silently not apply, so they are refused.
      if ((sandbox.denyRead ?? []).length > 0 || sandbox.networkTool !== undefined) {
        return yield* new Errors.InvalidConfig({
          field: (sandbox.denyRead ?? []).length > 0 ? "denyRead" : "networkTool",
          reason: "with --daemon it is the daemon's setting: give it to agent-terminal serve"
        })
      }
      const pty = yield* PtyService.PtyService
      const connected = yield* RemoteTerminal.Connected
      yield* pty.configureSandbox(connected.owner, {
        mode: sandbox.mode,
        network: SandboxOptions.networkOf(sandbox.network),
        ...(sandbox.workspace === undefined ? {} : { workspace: sandbox.workspace })
      })
    })
  )
  return Layer.provideMerge(configured, remote).pipe(Layer.provide(started))
}
