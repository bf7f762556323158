/**
 * A second machine on this one for tests: a network namespace joined to the host by a veth pair, with
 * addresses in a private range that exists only here (10.214.N.0/30 for the fleet's). Needs root and iproute2.
 */
import * as childProcess from "node:child_process"
import * as crypto from "node:crypto"

const ip = (...args: ReadonlyArray<string>) => childProcess.execFileSync("ip", args, { stdio: "pipe" })

/** The namespace: its name, the host's address on the pair and the namespace's. */
export interface Namespace {
  readonly name: string
  readonly hostAddress: string
  readonly address: string
  readonly remove: () => void
}

/** Whether this host can make one (root, `ip` on PATH). */
export const available = (): boolean => {
  if (typeof process.getuid !== "function" || process.getuid() !== 0) return false
  try {
    childProcess.execFileSync("ip", ["netns", "list"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

/**
 * What names a kind of namespace: its name's prefix, the two letters that begin its veth links' names, and the
 * second octet of its addresses (10.<octet>.N.0/30). Kinds made by different tests at once keep apart.
 */
export interface Kind {
  readonly prefix: string
  readonly link: string
  readonly octet: number
}

/** The fleet's second machines. */
export const fleetKind: Kind = { prefix: "at-fleet", link: "af", octet: 214 }

/** Make a namespace and its veth pair; `remove` deletes both. */
export const make = (kind: Kind = fleetKind): Namespace => {
  const tag = crypto.randomBytes(3).toString("hex")
  const name = `${kind.prefix}-${tag}`
  const hostSide = `${kind.link}h${tag}`
  const nsSide = `${kind.link}n${tag}`
  const subnet = 1 + crypto.randomInt(250)
  const hostAddress = `10.${kind.octet}.${subnet}.1`
  const address = `10.${kind.octet}.${subnet}.2`
  const remove = () => {
    for (const args of [["netns", "del", name], ["link", "del", hostSide]]) {
      try {
        ip(...args)
      } catch {
        // already gone
      }
    }
  }
  try {
    ip("netns", "add", name)
    ip("link", "add", hostSide, "type", "veth", "peer", "name", nsSide)
    ip("link", "set", nsSide, "netns", name)
    ip("addr", "add", `${hostAddress}/30`, "dev", hostSide)
    ip("link", "set", hostSide, "up")
    ip("-n", name, "addr", "add", `${address}/30`, "dev", nsSide)
    ip("-n", name, "link", "set", nsSide, "up")
    ip("-n", name, "link", "set", "lo", "up")
  } catch (error) {
    remove()
    throw error
  }
  return { name, hostAddress, address, remove }
}
