/**
 * The user-mode network stack that connects an `isolated` sandbox to the outside: `pasta` (Debian package
 * `passt`) first, else `slirp4netns`. Neither found is `SandboxUnavailable` at open — `isolated` never
 * quietly becomes `off` or `host`.
 */
import * as path from "node:path"
import { resolveBinary } from "./bwrapProbe.js"
import type { NetworkTool } from "./launcher.js"

const kindOf = (file: string): NetworkTool["kind"] =>
  path.basename(file).startsWith("slirp4netns") ? "slirp4netns" : "pasta"

/**
 * The tool to use: `configured` (a name searched on `PATH`, or a path; its kind from its name), else the
 * first of `pasta`, `slirp4netns` on `PATH`.
 */
export const resolveNetworkTool = (
  configured: string | undefined,
  searchPath: string | undefined
): { readonly _tag: "Found"; readonly tool: NetworkTool } | { readonly _tag: "Missing"; readonly reason: string } => {
  const missing = (name: string) => `${name} is not installed or not on PATH`
  const candidates = configured !== undefined ? [configured] : ["pasta", "slirp4netns"]
  const reasons: Array<string> = []
  for (const name of candidates) {
    const found = resolveBinary(name, searchPath, { label: name, missing })
    if (found._tag === "Found") return { _tag: "Found", tool: { kind: kindOf(name), path: found.path } }
    reasons.push(found.reason)
  }
  return {
    _tag: "Missing",
    reason: `--network isolated needs pasta (Debian package passt) or slirp4netns: ${reasons.join("; ")}`
  }
}
