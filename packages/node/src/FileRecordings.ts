/**
 * Recordings kept as files: `<directory>/<session id>-<start ms>.cast` (asciicast v2), the directory created
 * 0700 and each file 0600 — a terminal's output can hold anything the user could see. Written through a
 * stream (a line is queued, never awaited, by the session that produces it).
 *
 * @since 0.2.0
 */
import { Recording } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as path from "node:path"

/**
 * Options of the store.
 *
 * @since 0.2.0
 */
export interface Options {
  /** Where the recordings are (e.g. `<state dir>/recordings`). */
  readonly directory: string
}

const validName = /^[A-Za-z0-9._-]{1,200}\.cast$/

/** Write what is gathered at the latest once it reaches this many characters. */
const FLUSH_BYTES = 256 * 1024

/** …or this long after its first line (ms): a recording on disk is at most this far behind its session. */
const FLUSH_MS = 20

/**
 * The store over `options.directory`.
 *
 * @since 0.2.0
 */
export const make = (options: Options): Recording.Recordings["Type"] => {
  const directory = path.resolve(options.directory)
  const ensure = () => fs.mkdirSync(directory, { recursive: true, mode: 0o700 })
  return {
    create: ({ sessionId, startedAt }) =>
      Effect.sync(() => {
        const name = `${sessionId}-${startedAt}.cast`
        if (!validName.test(name)) return Option.none()
        try {
          ensure()
          const fd = fs.openSync(path.join(directory, name), "wx", 0o600)
          const stream = fs.createWriteStream("", { fd, encoding: "utf8" })
          let failed = false
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
              if (failed) return
              pending.push(line, "\n")
              pendingBytes += line.length + 1
              if (pendingBytes >= FLUSH_BYTES) flush()
              else scheduled ??= setTimeout(flush, FLUSH_MS)
            },
            close: Effect.async<void>((resume) => {
              flush()
              if (stream.closed) return resume(Effect.void)
              stream.end(() => resume(Effect.void))
            })
          })
        } catch {
          return Option.none()
        }
      }),
    list: Effect.sync(() => {
      let names: Array<string>
      try {
        names = fs.readdirSync(directory).filter((name) => validName.test(name))
      } catch {
        return []
      }
      return names.flatMap((name) => {
        try {
          const stat = fs.statSync(path.join(directory, name))
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
      }).sort((a, b) => b.startedAt - a.startedAt)
    }),
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

/**
 * The store as a layer.
 *
 * @since 0.2.0
 */
export const layer = (options: Options): Layer.Layer<Recording.Recordings> =>
  Layer.sync(Recording.Recordings, () => make(options))
