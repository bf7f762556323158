/**
 * Whether bubblewrap can run here: the binary (an absolute path, or a name searched on `PATH`), and one
 * real start of an empty sandbox with the namespaces a session needs, so a kernel or AppArmor that blocks
 * user namespaces is reported with bwrap's own words before any session is spawned.
 */
import * as Effect from "effect/Effect"
import * as childProcess from "node:child_process"
import * as path from "node:path"
import { processArgs } from "./bwrapArgs.js"
import { executable } from "./executable.js"

const PROBE_TIMEOUT_MS = 10_000

/** The bwrap binary to run, or why there is none. */
export const resolveBinary = (
  bwrap: string,
  searchPath: string | undefined
): { readonly _tag: "Found"; readonly path: string } | { readonly _tag: "Missing"; readonly reason: string } => {
  if (bwrap.includes("/")) {
    return executable(bwrap)
      ? { _tag: "Found", path: bwrap }
      : { _tag: "Missing", reason: `bubblewrap not found: ${bwrap} is not an executable file` }
  }
  for (const dir of (searchPath ?? "").split(":")) {
    if (dir === "") continue
    const candidate = path.join(dir, bwrap)
    if (executable(candidate)) return { _tag: "Found", path: candidate }
  }
  return {
    _tag: "Missing",
    reason: `bubblewrap (${bwrap}) is not installed or not on PATH; install the bubblewrap package`
  }
}

/**
 * Start an empty sandbox with the namespaces of a session (`--unshare-net` when `network` is off) and
 * report bwrap's complaint when it fails (e.g. "No permissions to creating new namespace").
 */
export const probe = (bwrap: string, network: boolean): Effect.Effect<void, string> =>
  Effect.async<void, string>((resume) => {
    const child = childProcess.execFile(
      bwrap,
      [...processArgs(network), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "/bin/sh", "-c", ":"],
      { timeout: PROBE_TIMEOUT_MS, encoding: "utf8", env: { PATH: "/usr/bin:/bin" } },
      (error, _stdout, stderr) => {
        if (error === null) return resume(Effect.void)
        const said = stderr.trim().split("\n").filter((line) => line.trim() !== "").slice(-3).join("; ")
        const how = error.killed ? `timed out after ${PROBE_TIMEOUT_MS} ms` : `exit ${error.code ?? error.signal}`
        resume(Effect.fail(said !== "" ? `${said} (${how})` : `${bwrap} failed to start a sandbox (${how})`))
      }
    )
    return Effect.sync(() => child.kill("SIGKILL"))
  })
