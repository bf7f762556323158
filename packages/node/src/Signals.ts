/**
 * Signals for a session's processes: only ever to a process group that is not our own (nor pid 1).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"

const ownGroup = (): number | undefined => {
  try {
    const stat = fs.readFileSync("/proc/self/stat", "latin1")
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2])
  } catch {
    return undefined
  }
}

/**
 * Signal a process group. Our own group and pid 1 are never a target; `false` when the group is gone.
 *
 * @since 0.1.0
 */
export const signalGroup = (pgid: number, signal: NodeJS.Signals): Effect.Effect<boolean> =>
  Effect.sync(() => {
    if (pgid <= 1 || pgid === process.pid || pgid === ownGroup()) return false
    try {
      process.kill(-pgid, signal)
      return true
    } catch {
      return false
    }
  })
