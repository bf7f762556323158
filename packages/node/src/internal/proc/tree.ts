/**
 * A process tree from a flat process table (Linux `/proc` or macOS `ps`): a root and its descendants by
 * parent links.
 */
import type { ProcessInspector } from "@agent-terminal/core"

/** `rootPid` and its descendants by parent links, root first, each as `ProcessInfo`. */
export const descendants = (
  table: ReadonlyArray<ProcessInspector.ProcessInfo>,
  rootPid: number
): Array<ProcessInspector.ProcessInfo> => {
  const byParent = new Map<number, Array<ProcessInspector.ProcessInfo>>()
  let root: ProcessInspector.ProcessInfo | undefined
  for (const info of table) {
    if (info.pid === rootPid) root = info
    const siblings = byParent.get(info.ppid)
    if (siblings === undefined) byParent.set(info.ppid, [info])
    else siblings.push(info)
  }
  if (root === undefined) return []
  const out = [root]
  const seen = new Set([rootPid])
  for (let i = 0; i < out.length; i++) {
    for (const child of byParent.get(out[i].pid) ?? []) {
      if (seen.has(child.pid)) continue
      seen.add(child.pid)
      out.push(child)
    }
  }
  return out
}

/** Just the `ProcessInfo` fields of a stat. */
export const toProcessInfo = (stat: ProcessInspector.ProcessInfo): ProcessInspector.ProcessInfo => ({
  pid: stat.pid,
  ppid: stat.ppid,
  pgid: stat.pgid,
  sid: stat.sid,
  ttyNr: stat.ttyNr,
  startTime: stat.startTime,
  state: stat.state,
  comm: stat.comm
})
