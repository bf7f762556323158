/**
 * Recordings kept as files: `<directory>/<session id>-<start ms>.cast` (asciicast v2), the directory created
 * 0700 (never through a link) and each file 0600 — a terminal's output can hold anything the user could see.
 * Written through a stream (a line is queued, never awaited, by the session that produces it).
 *
 * Under a budget: all recordings together take at most `maxTotalBytes` (default 1 GiB) and are kept at most
 * `maxAgeMs` (default 30 days). Finished recordings past either are removed, oldest first, when the store
 * starts, before each new recording, and every `pruneEveryMs` (layer only); a new recording is refused while
 * the budget is used up, and a live one stops taking lines when the budget would pass.
 *
 * @since 0.2.0
 */
import { Recording } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as fs from "node:fs"
import * as path from "node:path"
import * as StateFiles from "./StateFiles.js"

/**
 * Options of the store.
 *
 * @since 0.2.0
 */
export interface Options {
  /** Where the recordings are (e.g. `<state dir>/recordings`). */
  readonly directory: string
  /** All recordings together, at most (bytes; default 1 GiB). */
  readonly maxTotalBytes?: number | undefined
  /** A finished recording is removed once it is this old (ms; default 30 days). */
  readonly maxAgeMs?: number | undefined
  /** How often the layer prunes (ms; default 10 minutes). */
  readonly pruneEveryMs?: number | undefined
}

/**
 * The defaults of the budget.
 *
 * @since 0.3.0
 */
export const defaults = {
  maxTotalBytes: 1024 * 1024 * 1024,
  maxAgeMs: 30 * 24 * 3600 * 1000,
  pruneEveryMs: 10 * 60 * 1000
} as const

// `~` separates a fleet id's machine, run and random part (`m2~k2x9q1~3f…`): a machine of the fleet records too
const validName = /^[A-Za-z0-9._~-]{1,200}\.cast$/

/** Write what is gathered at the latest once it reaches this many characters. */
const FLUSH_BYTES = 256 * 1024

/** …or this long after its first line (ms): a recording on disk is at most this far behind its session. */
const FLUSH_MS = 20

/**
 * The store over `options.directory`.
 *
 * @since 0.2.0
 */
export const make = (options: Options): Recording.Recordings["Type"] & { readonly prune: () => number } => {
  const directory = path.resolve(options.directory)
  const maxTotalBytes = options.maxTotalBytes ?? defaults.maxTotalBytes
  const maxAgeMs = options.maxAgeMs ?? defaults.maxAgeMs
  const ensure = () => StateFiles.privateDirectory(directory)
  /** The recordings being written, and their bytes so far. */
  const live = new Map<string, number>()
  let finishedBytes = 0
  const liveBytes = () => {
    let total = 0
    for (const bytes of live.values()) total += bytes
    return total
  }
  /** Remove finished recordings past the age or the budget, oldest first; the bytes left. */
  const prune = (): number => {
    // the wall clock: an age is measured against the files' modification times, which the filesystem stamps on it
    const now = Date.now()
    const files = listFiles(directory).filter((file) => !live.has(file.name)).sort((a, b) =>
      a.modifiedAt - b.modifiedAt
    )
    let total = files.reduce((sum, file) => sum + file.bytes, 0)
    for (const file of files) {
      if (now - file.modifiedAt <= maxAgeMs && total + liveBytes() <= maxTotalBytes) continue
      try {
        fs.unlinkSync(path.join(directory, file.name))
        total -= file.bytes
      } catch {
        // gone already, or not ours to remove
      }
    }
    finishedBytes = total
    return total + liveBytes()
  }
  try {
    prune()
  } catch {
    // no directory yet
  }
  return {
    prune,
    create: ({ sessionId, startedAt }) =>
      Effect.sync(() => {
        const name = `${sessionId}-${startedAt}.cast`
        if (!validName.test(name)) return Option.none()
        try {
          ensure()
          if (prune() >= maxTotalBytes) return Option.none()
          const fd = fs.openSync(path.join(directory, name), "wx", 0o600)
          live.set(name, 0)
          const stream = fs.createWriteStream("", { fd, encoding: "utf8" })
          let failed = false
          let full = false
          stream.on("error", () => {
            failed = true
          })
          // lines are gathered and written every FLUSH_MS (or every 256 KiB): each write is a thread-pool
          // round trip; one per pty chunk, then one per event-loop turn, cost a recorded session 17–22 % more
          // CPU per MiB than a plain one, every FLUSH_MS 0–15 % (docs/performance.md, live group)
          let pending: Array<string> = []
          let pendingBytes = 0
          let scheduled: NodeJS.Timeout | undefined
          const flush = () => {
            if (scheduled !== undefined) clearTimeout(scheduled)
            scheduled = undefined
            if (pending.length === 0 || failed) return
            stream.write(pending.join(""))
            pending = []
            pendingBytes = 0
          }
          return Option.some({
            name,
            write: (line: string) => {
              if (failed || full) return
              const bytes = (live.get(name) ?? 0) + line.length + 1
              // the budget of every recording together: past it, this one takes no more lines
              if (finishedBytes + liveBytes() + line.length + 1 > maxTotalBytes) {
                full = true
                return
              }
              live.set(name, bytes)
              pending.push(line, "\n")
              pendingBytes += line.length + 1
              if (pendingBytes >= FLUSH_BYTES) flush()
              else scheduled ??= setTimeout(flush, FLUSH_MS)
            },
            close: Effect.async<void>((resume) => {
              flush()
              const done = () => {
                finishedBytes += live.get(name) ?? 0
                live.delete(name)
                resume(Effect.void)
              }
              if (stream.closed) return done()
              stream.end(done)
            })
          })
        } catch {
          return Option.none()
        }
      }),
    list: Effect.sync(() => listFiles(directory).sort((a, b) => b.startedAt - a.startedAt)),
    read: (name) =>
      Effect.sync(() => {
        if (!validName.test(name)) return Option.none()
        try {
          return Option.some(new Uint8Array(fs.readFileSync(path.join(directory, name))))
        } catch {
          return Option.none()
        }
      })
  }
}

const listFiles = (directory: string): Array<Recording.RecordingInfo> => {
  let names: Array<string>
  try {
    names = fs.readdirSync(directory).filter((name) => validName.test(name))
  } catch {
    return []
  }
  return names.flatMap((name) => {
    try {
      const stat = fs.lstatSync(path.join(directory, name))
      if (!stat.isFile()) return []
      const dash = name.lastIndexOf("-")
      return [{
        name,
        sessionId: name.slice(0, dash),
        bytes: stat.size,
        startedAt: Number(name.slice(dash + 1, -".cast".length)),
        modifiedAt: stat.mtimeMs
      }]
    } catch {
      return []
    }
  })
}

/**
 * The store as a layer, pruned when it starts and every `pruneEveryMs`.
 *
 * @since 0.2.0
 */
export const layer = (options: Options): Layer.Layer<Recording.Recordings> =>
  Layer.scoped(
    Recording.Recordings,
    Effect.gen(function*() {
      const store = make(options)
      yield* Effect.sync(() => store.prune()).pipe(
        Effect.ignore,
        Effect.repeat(Schedule.spaced(options.pruneEveryMs ?? defaults.pruneEveryMs)),
        Effect.delay(options.pruneEveryMs ?? defaults.pruneEveryMs),
        Effect.forkScoped
      )
      return store
    })
  )
