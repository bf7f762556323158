/**
 * Real programs on real ptys for the inspector tests: node-pty directly, the whole session killed and
 * awaited in the scope's finalizer, so nothing outlives a test.
 */
import type { ProcessInspector } from "@agent-terminal/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as pty from "node-pty"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

export interface PtyProgram {
  readonly pid: number
  readonly ttyPath: string
  readonly terminal: ProcessInspector.TerminalRef
  readonly write: (data: string) => Effect.Effect<void>
  readonly output: () => string
}

const statFields = (pid: number): Array<string> | undefined => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  } catch {
    return undefined
  }
}

/** Live (non-zombie) processes of session `sid`. */
export const sessionMembers = (sid: number): Array<number> =>
  fs.readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      const fields = statFields(pid)
      return fields !== undefined && Number(fields[3]) === sid && fields[0] !== "Z" && fields[0] !== "X"
    })

/** The syscall number a process's main thread is blocked in ("running", "-1", or the number). */
export const syscallOf = (pid: number): string => {
  try {
    return fs.readFileSync(`/proc/${pid}/syscall`, "latin1").split(" ")[0].trim()
  } catch {
    return "gone"
  }
}

const killSession = (term: pty.IPty, exited: Promise<void>) =>
  Effect.promise(async () => {
    const deadline = Date.now() + 10_000
    for (;;) {
      const members = sessionMembers(term.pid)
      for (const pid of members) {
        try {
          process.kill(pid, "SIGKILL")
        } catch {}
      }
      try {
        process.kill(-term.pid, "SIGKILL")
      } catch {}
      if (members.length === 0 || Date.now() > deadline) break
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))])
  })

/** Starts `file args` on a new pty (80x24, xterm-256color); the scope's close kills its whole session. */
export const spawnProgram = (
  file: string,
  args: ReadonlyArray<string>,
  options: { readonly cwd?: string; readonly env?: Record<string, string> } = {}
): Effect.Effect<PtyProgram, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const term = pty.spawn(file, [...args], {
        name: "xterm-256color",
        cols: 80,
        rows: 24,
        cwd: options.cwd ?? os.tmpdir(),
        env: { ...process.env, NODE_REPL_HISTORY: "", PYTHONSTARTUP: "", ...options.env }
      })
      let output = ""
      const data = term.onData((chunk) => {
        output += chunk
      })
      const exited = new Promise<void>((resolve) => {
        term.onExit(() => resolve())
      })
      const ttyPath: string = (term as any)._pty
      const program: PtyProgram = {
        pid: term.pid,
        ttyPath,
        terminal: { shellPid: term.pid, ttyPath },
        write: (input) => Effect.sync(() => term.write(input)),
        output: () => output
      }
      return { term, data, exited, program }
    }),
    ({ data, exited, term }) =>
      killSession(term, exited).pipe(
        Effect.ensuring(Effect.sync(() => data.dispose()))
      )
  ).pipe(Effect.map(({ program }) => program))

/**
 * Repeats `effect` every 20 ms until `until` holds; fails (with the last value) after `within`. An upper
 * bound for waiting, not a timing assertion.
 */
export const eventually = <A>(
  effect: Effect.Effect<A>,
  until: (a: A) => boolean,
  within: Duration.DurationInput = "20 seconds"
): Effect.Effect<A> =>
  Effect.suspend(() => {
    let last: A | undefined
    return effect.pipe(
      Effect.tap((a) =>
        Effect.sync(() => {
          last = a
        })
      ),
      Effect.repeat({ until, schedule: Schedule.passthrough<number, A, never>(Schedule.spaced("20 millis")) }),
      Effect.timeoutFail({
        duration: within,
        onTimeout: () => new Error(`not within ${Duration.format(within)}; last: ${JSON.stringify(last)}`)
      }),
      Effect.orDie
    )
  })

/** A temporary directory, removed with the scope. */
export const tempDir: Effect.Effect<string, never, Scope.Scope> = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "inspector-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)
