/**
 * The floor: node-pty driven directly, with nothing between the pty and the loop but a search for a
 * marker in the raw bytes. What any terminal tool on node-pty pays at least.
 */
import { EnvPolicy, ShellDialect } from "@agent-terminal/core"
import { BashDialect } from "@agent-terminal/node"
import { ShellMarkers } from "@agent-terminal/terminal"
import * as Effect from "effect/Effect"
import * as pty from "node-pty"

/** The prompt of the raw bash: a tiny marker nothing else prints. */
export const promptMarker = "#P#"

/** The same cleaned environment our sessions get, plus `extra`. */
export const cleanEnv = (extra: Readonly<Record<string, string>> = {}): Record<string, string> => ({
  ...EnvPolicy.build({ host: process.env, trusted: {}, integration: {} }),
  ...extra
})

interface Waiter {
  readonly marker: Buffer
  readonly resolve: () => void
  readonly reject: (error: Error) => void
  readonly timer: NodeJS.Timeout
}

/** A program on a pty, read as raw bytes. */
export class RawTerminal {
  readonly pty: pty.IPty
  bytes = 0
  readonly exited: Promise<{ readonly exitCode: number; readonly signal: number | undefined }>
  #waiter: Waiter | undefined
  #tail: Buffer = Buffer.alloc(0)

  constructor(
    file: string,
    args: ReadonlyArray<string>,
    options: { readonly env?: Record<string, string>; readonly cols?: number; readonly rows?: number } = {}
  ) {
    this.pty = pty.spawn(file, [...args], {
      name: "xterm-256color",
      cols: options.cols ?? 160,
      rows: options.rows ?? 40,
      cwd: process.cwd(),
      env: options.env ?? cleanEnv(),
      encoding: null
    })
    this.exited = new Promise((resolve) => {
      this.pty.onExit(({ exitCode, signal }) => {
        this.#fail(new Error(`${file} exited (${exitCode})`))
        resolve({ exitCode, signal })
      })
    })
    this.pty.onData((data: string | Buffer) => this.#onData(typeof data === "string" ? Buffer.from(data) : data))
  }

  /** Raw bash with the marker prompt: `bash --norc --noprofile`, `PS1=#P#`. */
  static bash(options: { readonly cols?: number; readonly rows?: number } = {}): RawTerminal {
    return new RawTerminal("bash", ["--norc", "--noprofile"], {
      env: cleanEnv({ PS1: promptMarker, PS2: "" }),
      ...options
    })
  }

  /**
   * Raw bash with the shell integration our sessions run (`BashDialect`: the prompt hook and its markers,
   * exactly as a session launches it), waited on by the prompt-end marker in the raw bytes: what the
   * integration itself costs the shell and the kernel, with none of the library's work.
   */
  static bashWithMarkers(options: { readonly cols?: number; readonly rows?: number } = {}): RawTerminal {
    const nonce = "0123456789abcdef01234567"
    const dialect = Effect.runSync(Effect.provide(ShellDialect.ShellDialect, BashDialect.layer))
    const launch = dialect.launch({ nonce, shell: "bash" })
    const terminal = new RawTerminal(launch.file, launch.args, { env: cleanEnv(launch.env), ...options })
    terminal.defaultMarker = ShellMarkers.encode("B", nonce)
    return terminal
  }

  /** What `next` and `roundTrip` wait for unless told otherwise. */
  defaultMarker = promptMarker

  #onData(chunk: Buffer): void {
    this.bytes += chunk.length
    const waiter = this.#waiter
    if (waiter === undefined) return
    const m = waiter.marker.length
    let found = chunk.indexOf(waiter.marker) >= 0
    if (!found && this.#tail.length > 0) {
      found = Buffer.concat([this.#tail, chunk.subarray(0, m - 1)]).indexOf(waiter.marker) >= 0
    }
    if (found) {
      this.#waiter = undefined
      this.#tail = Buffer.alloc(0)
      clearTimeout(waiter.timer)
      waiter.resolve()
      return
    }
    this.#tail = chunk.length >= m - 1
      ? Buffer.from(chunk.subarray(chunk.length - (m - 1)))
      : Buffer.concat([this.#tail, chunk]).subarray(-(m - 1))
  }

  #fail(error: Error): void {
    const waiter = this.#waiter
    if (waiter === undefined) return
    this.#waiter = undefined
    clearTimeout(waiter.timer)
    waiter.reject(error)
  }

  /** Resolves when `marker` appears in the bytes read from now on. Arm it before writing. */
  next(marker: string = this.defaultMarker, timeoutMs = 30_000): Promise<void> {
    if (this.#waiter !== undefined) return Promise.reject(new Error("already waiting"))
    return new Promise((resolve, reject) => {
      this.#tail = Buffer.alloc(0)
      this.#waiter = {
        marker: Buffer.from(marker),
        resolve,
        reject,
        timer: setTimeout(() => this.#fail(new Error(`no ${JSON.stringify(marker)} within ${timeoutMs} ms`)), timeoutMs)
      }
    })
  }

  write(data: string): void {
    this.pty.write(data)
  }

  /** Write `input` and wait for `marker` after it; resolves with the milliseconds it took. */
  async roundTrip(input: string, marker: string = this.defaultMarker, timeoutMs = 30_000): Promise<number> {
    const seen = this.next(marker, timeoutMs)
    const started = performance.now()
    this.write(input)
    await seen
    return performance.now() - started
  }

  /** Kill the program and wait for its exit (at most `ms`). */
  async kill(ms = 2000): Promise<void> {
    try {
      process.kill(-this.pty.pid, "SIGKILL")
    } catch {
      // not a group leader, or gone
    }
    try {
      this.pty.kill("SIGKILL")
    } catch {
      // gone
    }
    await Promise.race([this.exited, new Promise((resolve) => setTimeout(resolve, ms))])
  }
}
