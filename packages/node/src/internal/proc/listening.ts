/**
 * The sockets a process tree listens on, from `/proc`: each process's descriptors (`/proc/<pid>/fd/<n>`
 * links `socket:[inode]`) matched against the listening entries of the tables of its own network namespace
 * (`/proc/<pid>/net/tcp`, `tcp6`, `unix`) — so a server inside the sandbox's network namespace is seen as
 * well as one on the host's. No banner, no regex: the kernel's own account of who listens on what.
 */
import type { ProcessInspector } from "@agent-terminal/core"
import { readStat } from "./foregroundProbe.js"
import type { ProcFs } from "./procFs.js"
import { isProcError } from "./procFs.js"
import type { ProcStat } from "./procStat.js"
import { parseChildren } from "./procStat.js"

type Listener = ProcessInspector.Listener

/** The most processes and descriptors looked at in one look (a fork bomb is not walked to its end). */
const MAX_PROCESSES = 1024
const MAX_FDS = 4096

/** TCP's `LISTEN` state in `/proc/net/tcp*`. */
const TCP_LISTEN = "0A"
/** `__SO_ACCEPTCON` in `/proc/net/unix`'s flags: the socket accepts connections. */
const SO_ACCEPTCON = 0x10000

/** A listening socket of a table, by inode. */
type Table = Map<string, Omit<Listener, "pid" | "name">>

const ipv4 = (hex: string): string => {
  const bytes = [0, 2, 4, 6].map((at) => parseInt(hex.slice(at, at + 2), 16))
  return bytes.reverse().join(".")
}

/** An IPv6 address as `/proc/net/tcp6` writes it (four 32-bit words, each in host byte order), shortened. */
const ipv6 = (hex: string): string => {
  const bytes: Array<number> = []
  for (let word = 0; word < 4; word++) {
    const chunk = hex.slice(word * 8, word * 8 + 8)
    for (let at = 6; at >= 0; at -= 2) bytes.push(parseInt(chunk.slice(at, at + 2), 16))
  }
  const groups: Array<string> = []
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16))
  // the longest run of two or more zero groups is written "::"
  let best = { start: -1, length: 1 }
  for (let i = 0; i < 8;) {
    let j = i
    while (j < 8 && groups[j] === "0") j++
    if (j - i > best.length) best = { start: i, length: j - i }
    i = j === i ? i + 1 : j
  }
  if (best.start === -1) return groups.join(":")
  return `${groups.slice(0, best.start).join(":")}::${groups.slice(best.start + best.length).join(":")}`
}

/** The listening entries of a `/proc/net/tcp` or `tcp6` table, by inode. */
export const parseTcp = (text: string, protocol: "tcp" | "tcp6"): Table => {
  const table: Table = new Map()
  for (const line of text.split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/)
    if (fields.length < 10 || fields[3] !== TCP_LISTEN) continue
    const [address, port] = fields[1]!.split(":")
    if (address === undefined || port === undefined) continue
    table.set(fields[9]!, {
      protocol,
      address: protocol === "tcp" ? ipv4(address) : ipv6(address),
      port: parseInt(port, 16)
    })
  }
  return table
}

/** The listening entries of `/proc/net/unix`, by inode (`@name` for an abstract socket). */
export const parseUnix = (text: string): Table => {
  const table: Table = new Map()
  for (const line of text.split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/)
    if (fields.length < 7) continue
    if ((parseInt(fields[3]!, 16) & SO_ACCEPTCON) === 0) continue
    table.set(fields[6]!, { protocol: "unix", address: fields[7] ?? "(unnamed)" })
  }
  return table
}

/** `rootPid` and its descendants, by `task/<tid>/children` (a few reads instead of all of `/proc`). */
const tree = (procFs: ProcFs, rootPid: number): Array<ProcStat> => {
  const root = readStat(procFs, rootPid)
  if (isProcError(root)) return []
  const out: Array<ProcStat> = [root]
  const seen = new Set<number>([rootPid])
  for (let i = 0; i < out.length && out.length < MAX_PROCESSES; i++) {
    const stat = out[i]!
    const tids = procFs.list(`${stat.pid}/task`)
    for (const tid of isProcError(tids) ? [String(stat.pid)] : tids) {
      const children = procFs.readText(`${stat.pid}/task/${tid}/children`)
      if (isProcError(children)) continue
      for (const child of parseChildren(children)) {
        if (seen.has(child)) continue
        seen.add(child)
        const childStat = readStat(procFs, child)
        if (!isProcError(childStat)) out.push(childStat)
      }
    }
  }
  return out
}

/** The socket inodes a process holds open. */
const socketInodes = (procFs: ProcFs, pid: number): Array<string> => {
  const fds = procFs.list(`${pid}/fd`)
  if (isProcError(fds) || procFs.readLink === undefined) return []
  const out: Array<string> = []
  for (const fd of fds.slice(0, MAX_FDS)) {
    const link = procFs.readLink(`${pid}/fd/${fd}`)
    if (isProcError(link)) continue
    const match = /^socket:\[(\d+)\]$/.exec(link)
    if (match !== null) out.push(match[1]!)
  }
  return out
}

/**
 * Every socket `rootPid` and its descendants listen on, in the order of the tree (the root first), each once
 * (a socket shared by a parent and the workers it forked is the first holder's).
 */
export const listening = (procFs: ProcFs, rootPid: number): Array<Listener> => {
  const tables = new Map<string, Table>()
  const tableOf = (pid: number): Table => {
    const namespace = procFs.readLink?.(`${pid}/ns/net`)
    const key = namespace === undefined || isProcError(namespace) ? `pid:${pid}` : namespace
    const known = tables.get(key)
    if (known !== undefined) return known
    const table: Table = new Map()
    for (
      const [file, parse] of [
        ["tcp", (text: string) => parseTcp(text, "tcp")],
        ["tcp6", (text: string) => parseTcp(text, "tcp6")],
        ["unix", parseUnix]
      ] as const
    ) {
      const text = procFs.readText(`${pid}/net/${file}`)
      if (!isProcError(text)) { for (const [inode, entry] of parse(text)) table.set(inode, entry) }
    }
    tables.set(key, table)
    return table
  }
  const out: Array<Listener> = []
  const seen = new Set<string>()
  for (const stat of tree(procFs, rootPid)) {
    const inodes = socketInodes(procFs, stat.pid).filter((inode) => !seen.has(inode))
    if (inodes.length === 0) continue
    const table = tableOf(stat.pid)
    for (const inode of inodes) {
      const entry = table.get(inode)
      if (entry === undefined) continue
      seen.add(inode)
      out.push({ pid: stat.pid, name: stat.comm, ...entry })
    }
  }
  return out
}
