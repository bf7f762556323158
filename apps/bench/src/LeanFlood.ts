/**
 * Floods at the emulator's speed: the CPU per MiB of output the server spends, against tmux's server for the
 * same command in the same run (the target), with the raw node-pty floor and `@xterm/headless` alone (the
 * emulator itself, configured as ours) beside it. Two shapes: `seq` (short lines) and 100-byte lines. Each of
 * ours, the raw floor and xterm runs in a fresh process (`FloodChild`); tmux's CPU is its server's, read from
 * `/proc` around the command. Rounds alternate; the ratio to tmux is the median of the rounds' ratios.
 */
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import type { FloodReport } from "./FloodChild.js"
import * as Forked from "./Forked.js"
import type { RunOptions } from "./Harness.js"
import { size } from "./Harness.js"
import type { Metric } from "./Metric.js"
import { compare, comparePaired, distribution } from "./Metric.js"
import * as Proc from "./Proc.js"
import * as Stats from "./Stats.js"

const group = "lean"
const MiB = 2 ** 20

interface Shape {
  readonly key: string
  readonly command: (options: RunOptions) => string
  readonly describe: string
}

const shapes: ReadonlyArray<Shape> = [
  { key: "seq", command: (options) => `seq 1 ${size(options, 3_000_000, 500_000)}`, describe: "seq (short lines)" },
  {
    key: "lines",
    command: (options) => `head -c ${size(options, 20, 4)}M /dev/zero | tr '\\0' a | fold -w 99`,
    describe: "100-byte lines"
  }
]

const child = (mode: FloodReport["mode"], command: string) =>
  Forked.report<FloodReport>("./FloodChild.js", [mode, command])

const tmuxInstalled = (): boolean => {
  try {
    execFileSync("tmux", ["-V"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

/** tmux's server CPU while `command` runs in a 160×40 window of a fresh server (after a warm-up flood), ms. */
const tmux = (command: string) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const socket = `agent-terminal-lean-${process.pid}`
      const run = (...args: ReadonlyArray<string>) =>
        execFileSync("tmux", ["-L", socket, "-f", "/dev/null", ...args], { encoding: "utf8" })
      run("new-session", "-d", "-x", "160", "-y", "40", "bash --norc --noprofile")
      return { socket, run, pid: Number(run("display-message", "-p", "#{pid}").trim()) }
    }),
    ({ pid, run, socket }) =>
      Effect.sync(() => {
        const flood = (text: string) => {
          run("send-keys", `${text}; tmux -L ${socket} wait-for -S done`, "Enter")
          run("wait-for", "done")
        }
        flood("seq 1 20000")
        const before = Proc.stat(pid)?.cpuMs ?? Number.NaN
        flood(command)
        return (Proc.stat(pid)?.cpuMs ?? Number.NaN) - before
      }),
    ({ run }) =>
      Effect.sync(() => {
        try {
          run("kill-server")
        } catch {
          // gone
        }
      })
  )

const perMiB = (cpuMs: number, bytes: number) => cpuMs / (bytes / MiB)

const measure = (shape: Shape, options: RunOptions, withTmux: boolean) =>
  Effect.gen(function*() {
    const command = shape.command(options)
    const rounds = size(options, 3, 1)
    const samples = { ours: [] as Array<number>, floor: [] as Array<number>, xterm: [] as Array<number> }
    const tmuxSamples: Array<number> = []
    let bytes = 0
    for (let round = 0; round < rounds; round++) {
      const floor = yield* child("floor", command)
      bytes = floor.bytes
      samples.floor.push(perMiB(floor.cpuMs, bytes))
      samples.ours.push(perMiB((yield* child("ours", command)).cpuMs, bytes))
      samples.xterm.push(perMiB((yield* child("xterm", command)).cpuMs, bytes))
      if (withTmux) tmuxSamples.push(perMiB(yield* tmux(command), bytes))
      options.progress(`lean: flood ${shape.key} round ${round + 1}/${rounds}`)
    }
    const name = `lean.flood.${shape.key}`
    const baseline = (suffix: string, values: ReadonlyArray<number>, note: string): Metric => ({
      name: `${name}.${suffix}`,
      group,
      kind: "baseline",
      unit: "ms CPU/MiB",
      ...distribution(values),
      compared: [],
      notes: [note]
    })
    const tmuxRow = withTmux
      ? baseline("tmux", tmuxSamples, "tmux's server (a fresh one, 160×40, -f /dev/null) while the command runs in it")
      : undefined
    const floorRow = baseline("node-pty", samples.floor, "a raw node-pty read loop in a fresh Node")
    const xtermRow = baseline(
      "xterm",
      samples.xterm,
      "the same bytes written to @xterm/headless alone (160×40, unicode 11, 64-row scrollback), in a fresh Node"
    )
    const ratio = tmuxRow === undefined ? undefined : comparePaired(samples.ours, tmuxSamples, tmuxRow)
    const ours = distribution(samples.ours)
    const rows: Array<Metric> = [
      {
        name,
        group,
        kind: "ours",
        unit: "ms CPU/MiB",
        ...ours,
        compared: [
          ...(ratio === undefined ? [] : [ratio]),
          compare(ours.value, xtermRow),
          compare(ours.value, floorRow)
        ],
        target: {
          text: `CPU per MiB of output (${shape.describe}) ≤ 1.5 × tmux's`,
          met: ratio?.ratio === null || ratio === undefined ? null : ratio.ratio <= 1.5
        },
        notes: [
          `\`${command}\` in one send, ${Stats.round(bytes / MiB)} MiB through the pty: this process's CPU over ` +
          "the send (PtyService in a fresh Node), per MiB",
          ...(withTmux ? [] : ["tmux is not installed: no ratio"])
        ]
      },
      ...(tmuxRow === undefined ? [] : [tmuxRow]),
      xtermRow,
      floorRow
    ]
    return rows
  })

/** The flood rows, both shapes. */
export const flood = (options: RunOptions) =>
  Effect.map(
    Effect.forEach(shapes, (shape) => measure(shape, options, tmuxInstalled()), { concurrency: 1 }),
    (all) => all.flat()
  )
