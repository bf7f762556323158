/**
 * The peers: how agent frameworks drive terminals today, measured on this machine in the same run.
 *
 * - tmux: `send-keys` the command plus a sentinel `echo`, then poll `capture-pane` until the sentinel
 *   shows (what several frameworks do), and the `wait-for` variant (block on a tmux channel signalled by
 *   the command line — the fastest way to drive tmux).
 * - pexpect: spawn bash, expect a prompt marker (Debian's python3-pexpect under /usr/bin/python3).
 */
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { cleanEnv, promptMarker } from "./RawPty.js"

const run = (file: string, args: ReadonlyArray<string>, options: { env?: Record<string, string> } = {}) =>
  new Promise<string>((resolve, reject) => {
    childProcess.execFile(file, [...args], { encoding: "utf8", env: options.env ?? cleanEnv() }, (error, stdout) => {
      if (error) reject(error)
      else resolve(stdout)
    })
  })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const found = (file: string) => {
  for (const dir of ["/usr/bin", "/bin", "/usr/local/bin"]) {
    if (fs.existsSync(`${dir}/${file}`)) return `${dir}/${file}`
  }
  return undefined
}

/** The tmux binary, or why there is none. */
export const tmuxBinary = (): { readonly path: string } | { readonly missing: string } => {
  const path = found("tmux")
  return path === undefined ? { missing: "tmux is not installed" } : { path }
}

/** A private tmux server (own socket, no config) with one bash window. */
export class TmuxSession {
  readonly socket = `agent-terminal-bench-${process.pid}-${Math.random().toString(36).slice(2, 8)}`
  readonly target = "bench"
  #counter = 0

  constructor(readonly tmux: string) {}

  #tmux(args: ReadonlyArray<string>): Promise<string> {
    return run(this.tmux, ["-L", this.socket, "-f", "/dev/null", ...args])
  }

  async start(): Promise<void> {
    await this.#tmux([
      "new-session",
      "-d",
      "-s",
      this.target,
      "-x",
      "160",
      "-y",
      "40",
      `env PS1='${promptMarker}' bash --norc --noprofile`
    ])
    await this.#until(async () => (await this.capture()).includes(promptMarker), 10, 10_000)
  }

  capture(): Promise<string> {
    return this.#tmux(["capture-pane", "-p", "-t", this.target])
  }

  async #until(check: () => Promise<boolean>, pollMs: number, timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs
    while (!(await check())) {
      if (performance.now() > deadline) throw new Error("tmux: timed out")
      await sleep(pollMs)
    }
  }

  /** `send-keys 'cmd; echo SENTINEL' Enter`, then `capture-pane` every `pollMs` until the sentinel line shows. */
  async pollRoundTrip(command: string, pollMs: number): Promise<number> {
    const sentinel = `__AT_${++this.#counter}__`
    const started = performance.now()
    await this.#tmux(["send-keys", "-t", this.target, `${command}; echo ${sentinel}`, "Enter"])
    await this.#until(
      async () => (await this.capture()).split("\n").some((line) => line.trim() === sentinel),
      pollMs,
      30_000
    )
    return performance.now() - started
  }

  /** `send-keys 'cmd; tmux wait-for -S ch' Enter` and block in `tmux wait-for ch`. */
  async waitForRoundTrip(command: string): Promise<number> {
    const channel = `at${++this.#counter}`
    const started = performance.now()
    await this.#tmux([
      "send-keys",
      "-t",
      this.target,
      `${command}; ${this.tmux} -L ${this.socket} wait-for -S ${channel}`,
      "Enter"
    ])
    await this.#tmux(["wait-for", channel])
    return performance.now() - started
  }

  async stop(): Promise<void> {
    await this.#tmux(["kill-server"]).catch(() => undefined)
    // tmux 3.3 leaves its socket file behind after kill-server
    fs.rmSync(path.join(process.env.TMUX_TMPDIR ?? "/tmp", `tmux-${process.getuid?.() ?? 0}`, this.socket), {
      force: true
    })
  }
}

/** Debian's python3 with pexpect (the default `python3` here may be another one without it), or why not. */
export const pexpectPython = (): { readonly path: string } | { readonly missing: string } => {
  const python = "/usr/bin/python3"
  if (!fs.existsSync(python)) return { missing: "/usr/bin/python3 is not installed" }
  const probe = childProcess.spawnSync(python, ["-c", "import pexpect"], { encoding: "utf8" })
  return probe.status === 0 ? { path: python } : { missing: "python3-pexpect is not installed" }
}

const pexpectScript = `
import json, os, sys, time, pexpect
n, warmup, delay = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
env = dict(os.environ)
env["PS1"] = ${JSON.stringify(promptMarker)}
env["PS2"] = ""
child = pexpect.spawn("bash", ["--norc", "--noprofile"], env=env, dimensions=(40, 160))
if delay != "default":
    child.delaybeforesend = None
child.expect_exact(${JSON.stringify(promptMarker)}, timeout=10)
samples = []
for i in range(n + warmup):
    started = time.perf_counter()
    child.sendline("true")
    child.expect_exact(${JSON.stringify(promptMarker)}, timeout=30)
    samples.append((time.perf_counter() - started) * 1000)
child.close(force=True)
print(json.dumps({"samples": samples[warmup:], "version": pexpect.__version__}))
`

/**
 * `n` round trips of `sendline("true")` + `expect_exact(marker)` in pexpect. `delayBeforeSend: "default"`
 * keeps pexpect's default 50 ms sleep before each send; `"none"` turns it off (as tuned users do).
 */
export const pexpectRoundTrips = async (
  python: string,
  n: number,
  warmup: number,
  delayBeforeSend: "default" | "none"
): Promise<{ readonly samples: ReadonlyArray<number>; readonly version: string }> => {
  const stdout = await run(python, ["-c", pexpectScript, String(n), String(warmup), delayBeforeSend], {
    env: cleanEnv()
  })
  return JSON.parse(stdout.trim().split("\n").pop()!)
}
