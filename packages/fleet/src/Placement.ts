/**
 * Where a new terminal goes: the machine named, or among the live machines with every label asked for, the
 * one with the most free room (then the least load, then the name, so the choice is stable).
 *
 * @since 0.3.0
 */
import * as Either from "effect/Either"
import type { Capacity } from "./Discovery.js"
import { NoMachineAvailable } from "./FleetErrors.js"

/**
 * What the caller asks for.
 *
 * @since 0.3.0
 */
export interface Request {
  readonly machine?: string | undefined
  readonly labels?: ReadonlyArray<string> | undefined
}

const describe = (request: Request) =>
  request.machine !== undefined
    ? `machine ${request.machine}`
    : request.labels !== undefined && request.labels.length > 0
    ? `labels ${request.labels.join(", ")}`
    : "a new terminal"

/**
 * The machine for `request` among `machines` (the live set).
 *
 * @since 0.3.0
 */
export const choose = (
  machines: ReadonlyArray<Capacity>,
  request: Request = {}
): Either.Either<Capacity, NoMachineAvailable> => {
  const wanted = describe(request)
  if (request.machine !== undefined) {
    const named = machines.find((machine) => machine.machine === request.machine)
    if (named === undefined) {
      return Either.left(new NoMachineAvailable({ wanted, reason: "it is not in the fleet now" }))
    }
    return named.free > 0
      ? Either.right(named)
      : Either.left(new NoMachineAvailable({ wanted, reason: `it has no free room (${named.terminals} terminals)` }))
  }
  const labels = request.labels ?? []
  const fitting = machines.filter((machine) => labels.every((label) => machine.labels.includes(label)))
  if (fitting.length === 0) {
    return Either.left(
      new NoMachineAvailable({
        wanted,
        reason: machines.length === 0 ? "no machine is in the fleet now" : "no machine has them"
      })
    )
  }
  const withRoom = fitting.filter((machine) => machine.free > 0)
  if (withRoom.length === 0) return Either.left(new NoMachineAvailable({ wanted, reason: "every machine is full" }))
  const best = withRoom.reduce((a, b) =>
    b.free > a.free || (b.free === a.free && (b.load < a.load || (b.load === a.load && b.machine < a.machine)))
      ? b
      : a
  )
  return Either.right(best)
}
