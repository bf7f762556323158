/**
 * Whether bubblewrap can run here: the binary (an absolute path, or a name searched on `PATH`), and one
 * real start of an empty sandbox through the same launcher, namespaces, seccomp program and network as a
 * session, so a kernel or AppArmor that blocks user namespaces, a filter the kernel refuses, or a network
 * tool that cannot attach is reported in its own words before any session is spawned.
 */
import * as Effect from "effect/Effect"
import * as childProcess from "node:child_process"
import * as path from "node:path"
import { executable } from "../pty/executable.js"

const PROBE_TIMEOUT_MS = 10_000

/** The binary to run, or why there is none. */
export const resolveBinary = (
  name: string,
  searchPath: string | undefined,
  what: { readonly label: string; readonly missing: (name: string) => string } = {
    label: "bubblewrap",
    missing: (n) => `bubblewrap (${n}) is not installed or not on PATH; install the bubblewrap package`
  }
): { readonly _tag: "Found"; readonly path: string } | { readonly _tag: "Missing"; readonly reason: string } => {
  if (name.includes("/")) {
    return executable(name)
      ? { _tag: "Found", path: name }
      : { _tag: "Missing", reason: `${what.label} not found: ${name} is not an executable file` }
  }
  for (const dir of (searchPath ?? "").split(":")) {
    if (dir === "") continue
    const candidate = path.join(dir, name)
    if (executable(candidate)) return { _tag: "Found", path: candidate }
  }
  return { _tag: "Missing", reason: what.missing(name) }
}

/**
 * Run one empty sandbox (`file args`, the launcher of `launcher.ts` around bwrap and `/bin/sh -c :`) and
 * report its complaint when it fails (e.g. "No permissions to creating new namespace").
 */
export const probe = (
  launch: { readonly file: string; readonly args: ReadonlyArray<string> }
): Effect.Effect<void, string> =>
  Effect.async<void, string>((resume) => {
    const child = childProcess.execFile(
      launch.file,
      [...launch.args],
      { timeout: PROBE_TIMEOUT_MS, encoding: "utf8", env: { PATH: "/usr/bin:/bin", ...tmpdirOf(process.env) } },
      (error, _stdout, stderr) => {
        if (error === null) return resume(Effect.void)
        const said = stderr.trim().split("\n").filter((line) => line.trim() !== "").slice(-3).join("; ")
        const how = error.killed ? `timed out after ${PROBE_TIMEOUT_MS} ms` : `exit ${error.code ?? error.signal}`
        resume(Effect.fail(said !== "" ? `${said} (${how})` : `the sandbox failed to start (${how})`))
      }
    )
    return Effect.sync(() => child.kill("SIGKILL"))
  })

const tmpdirOf = (env: NodeJS.ProcessEnv): Record<string, string> =>
  env.TMPDIR !== undefined ? { TMPDIR: env.TMPDIR } : {}
