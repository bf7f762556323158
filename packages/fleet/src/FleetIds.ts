/**
 * Ids that name their machine and the machine's run: `<machine>~<run>~<random>` (`m2~k2x9q1~3f…`). A client
 * routes every call by id straight to the machine it names, and a machine that restarted (a new run) is known
 * from the id alone: its old run's terminals are lost, never answered by a fresh pty. A machine mints these
 * through the terminal service's `sessionIdPrefix` setting.
 *
 * @since 0.3.0
 */
import * as crypto from "node:crypto"

/**
 * The longest machine name whose ids stay within the 64 characters of an id (`~`, a run of 6, `~`, 24 random).
 *
 * @since 0.3.0
 */
export const maxMachineLength = 32

/**
 * A new run's name: 6 characters of base 36, random.
 *
 * @since 0.3.0
 */
export const newRun = (): string => (crypto.randomBytes(4).readUInt32BE(0) % 36 ** 6).toString(36).padStart(6, "0")

/**
 * What every id a run of `machine` mints starts with.
 *
 * @since 0.3.0
 */
export const prefix = (machine: string, run: string): string => `${machine}~${run}~`

/**
 * Where an id lives.
 *
 * @since 0.3.0
 */
export interface Place {
  readonly machine: string
  readonly run: string
}

const pattern = /^([A-Za-z0-9_-]{1,64})~([a-z0-9]{1,8})~[A-Za-z0-9]{1,64}$/

/**
 * The machine and run an id names, or `undefined` for an id that names none (an id of a lone daemon).
 *
 * @since 0.3.0
 */
export const parse = (id: string): Place | undefined => {
  const match = pattern.exec(id)
  return match === null ? undefined : { machine: match[1]!, run: match[2]! }
}
