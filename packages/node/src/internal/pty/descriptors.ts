/**
 * Room in the process's descriptor table before a spawn: a pty, its reader and the process's bookkeeping take
 * several descriptors each, and a server that runs out fails the next `forkpty` for whichever owner comes
 * next (`forkpty failed`), or an HTTP `accept`. So a spawn is refused first — `LimitReached` naming the
 * server's descriptors — while `RESERVED` of them are still free for everything else.
 */
import { Errors } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"

/** Descriptors kept free for the server's own work (connections, its databases, logs). */
export const RESERVED = 64

/** Descriptors one spawn takes at most (the pty's master, its slave while opening, pipes, the inspector's). */
export const PER_SPAWN = 8

/** The soft `RLIMIT_NOFILE` of this process, from `/proc/self/limits` (`undefined`: not Linux, unreadable). */
export const limit = (): number | undefined => {
  try {
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(fs.readFileSync("/proc/self/limits", "utf8"))
    return line === null || line[1] === "unlimited" ? undefined : Number(line[1])
  } catch {
    return undefined
  }
}

/** How many descriptors this process holds now (`undefined`: unknown here). */
export const open = (): number | undefined => {
  try {
    return fs.readdirSync("/proc/self/fd").length
  } catch {
    return undefined
  }
}

/** Refused when a spawn would leave fewer than `RESERVED` descriptors free. */
export const checkHeadroom: Effect.Effect<void, Errors.LimitReached> = Effect.suspend(() => {
  const max = limit()
  if (max === undefined) return Effect.void
  const held = open()
  if (held === undefined || held + PER_SPAWN + RESERVED <= max) return Effect.void
  return Effect.fail(new Errors.LimitReached({ limit: "file descriptors", max, scope: "server" }))
})
