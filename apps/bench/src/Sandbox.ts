/**
 * What the sandbox costs: opening a shell until its first prompt, an `echo` round trip, and closing it, in
 * each confinement profile (bubblewrap's read-only and workspace-write with the network off, isolated
 * through pasta, and the host's), against the same without a sandbox. The isolated row includes starting
 * pasta and handing it the namespace before the shell runs.
 */
import { Ids, PtyService, type Sandbox } from "@agent-terminal/core"
import { NodeTerminal } from "@agent-terminal/node"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Group, RunOptions } from "./Harness.js"
import { guard, owner, size, timed } from "./Harness.js"
import type { Metric } from "./Metric.js"
import { compare, distribution } from "./Metric.js"

const group = "sandbox"

interface Profile {
  readonly name: string
  readonly mode: Sandbox.Mode
  readonly network: Sandbox.NetworkMode
}

const profiles: ReadonlyArray<Profile> = [
  { name: "none", mode: "danger-full-access", network: "host" },
  { name: "read-only", mode: "read-only", network: "off" },
  { name: "workspace-write", mode: "workspace-write", network: "off" },
  { name: "workspace-write.isolated", mode: "workspace-write", network: "isolated" },
  { name: "workspace-write.host", mode: "workspace-write", network: "host" }
]

const measure = (profile: Profile, workspace: string, options: RunOptions) =>
  Effect.gen(function*() {
    const service = yield* PtyService.PtyService
    const n = size(options, 20, 5)
    const opens: Array<number> = []
    const echoes: Array<number> = []
    const closes: Array<number> = []
    for (let i = 0; i < n + 1; i++) {
      const [opened, openMs] = yield* timed(service.open(owner, { name: `sandbox-${i}`, cwd: workspace }))
      const id = Ids.SessionId.make(opened.sessionId)
      const [, echoMs] = yield* timed(service.send(owner, id, { text: "echo hi" }))
      const [, closeMs] = yield* timed(service.close(owner, id))
      if (i === 0) continue
      opens.push(openMs)
      echoes.push(echoMs)
      closes.push(closeMs)
    }
    options.progress(`sandbox: ${profile.name} ${n}/${n}`)
    return { opens, echoes, closes }
  }).pipe(
    Effect.scoped,
    Effect.provide(
      NodeTerminal.layer({}, {
        sandbox: { mode: profile.mode, network: profile.network, workspace }
      })
    )
  )

const rows = (profile: Profile, m: { opens: Array<number>; echoes: Array<number>; closes: Array<number> }) => {
  const kind = profile.name === "none" ? "baseline" : "ours"
  const row = (what: string, samples: Array<number>, note: string): Metric => ({
    name: `sandbox.${what}.${profile.name}`,
    group,
    kind,
    unit: "ms",
    ...distribution(samples),
    compared: [],
    notes: [note]
  })
  return [
    row("open", m.opens, `open until the first prompt; ${profile.mode}, network ${profile.network}`),
    row("echo", m.echoes, "terminal send `echo hi` until its prompt"),
    row("close", m.closes, "close of the idle session")
  ]
}

/** The group. */
export const sandbox: Group = {
  name: group,
  description: "open, echo and close in each sandbox profile (bubblewrap, network off/isolated/host) vs none",
  run: (options) =>
    guard(
      profiles.flatMap((profile) =>
        ["open", "echo", "close"].map((what) => ({ name: `sandbox.${what}.${profile.name}`, group, unit: "ms" }))
      ),
      Effect.acquireUseRelease(
        Effect.sync(() => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "at-bench-sandbox-")))),
        (workspace) =>
          Effect.gen(function*() {
            const metrics: Array<Metric> = []
            for (const profile of profiles) metrics.push(...rows(profile, yield* measure(profile, workspace, options)))
            const baseline = (what: string) => metrics.find((m) => m.name === `sandbox.${what}.none`)
            return metrics.map((metric) =>
              metric.kind === "ours"
                ? { ...metric, compared: [compare(metric.value, baseline(metric.name.split(".")[1]!))] }
                : metric
            )
          }),
        (workspace) => Effect.sync(() => fs.rmSync(workspace, { recursive: true, force: true }))
      )
    )
}
