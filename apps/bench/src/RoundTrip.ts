/**
 * `true` round trips: write `true` + Enter, wait until the shell is back at its prompt. Ours through
 * `PtyService.send`, against the raw node-pty floor (interleaved in blocks, so drift on a shared machine
 * hits both alike), tmux (capture-pane polling and wait-for) and pexpect; and ours with zsh and fish as
 * the session's shell beside bash.
 */
import * as Effect from "effect/Effect"
import * as Forked from "./Forked.js"
import type { Group, RunOptions } from "./Harness.js"
import { guard, openShell, promise, size, tally, timed, withTerminal } from "./Harness.js"
import type { InMemoryReport } from "./InMemoryChild.js"
import type { Metric } from "./Metric.js"
import { allMet, compare, distribution, skipped } from "./Metric.js"
import * as Peers from "./Peers.js"
import * as Proc from "./Proc.js"
import { RawTerminal } from "./RawPty.js"

const group = "roundtrip"
const TMUX_POLL_MS = 10
/** The library's own CPU per send may not grow past this (issue 19: "not above today's"). */
const IN_MEMORY_MAX_US = 50

const floorAndOurs = (options: RunOptions) =>
  withTerminal(
    {},
    Effect.gen(function*() {
      const n = size(options, 500, 200)
      const blocks = 5
      const warmup = 20
      const raw = RawTerminal.bash()
      yield* Effect.addFinalizer(() => promise(() => raw.kill()))
      yield* promise(() => raw.next())
      const { send } = yield* openShell({ name: "roundtrip" })
      for (let i = 0; i < warmup; i++) {
        yield* promise(() => raw.roundTrip("true\r"))
        yield* send("true")
      }
      const floor: Array<number> = []
      const ours: Array<number> = []
      const floorCpu: Array<number> = []
      const oursCpu: Array<number> = []
      const reasons: Array<string> = []
      const exitCodes: Array<string> = []
      const perBlock = n / blocks
      for (let block = 0; block < blocks; block++) {
        let cpu = Proc.selfCpuMs()
        for (let i = 0; i < perBlock; i++) floor.push(yield* promise(() => raw.roundTrip("true\r")))
        floorCpu.push((Proc.selfCpuMs() - cpu) / perBlock)
        cpu = Proc.selfCpuMs()
        for (let i = 0; i < perBlock; i++) {
          const [result, ms] = yield* timed(send("true"))
          ours.push(ms)
          reasons.push(result.waitReason)
          exitCodes.push(String(result.exitCode))
        }
        oursCpu.push((Proc.selfCpuMs() - cpu) / perBlock)
        options.progress(`roundtrip: ${(block + 1) * perBlock}/${n} (floor and ours)`)
      }
      return { floor, ours, floorCpu, oursCpu, reasons: tally(reasons), exitCodes: tally(exitCodes) }
    })
  )

const tmuxRows = (options: RunOptions) =>
  Effect.gen(function*() {
    const poll = { name: "roundtrip.true.tmux-poll", group, kind: "baseline" as const, unit: "ms" }
    const waitFor = { name: "roundtrip.true.tmux-wait-for", group, kind: "baseline" as const, unit: "ms" }
    const binary = Peers.tmuxBinary()
    if ("missing" in binary) return [skipped(poll, binary.missing), skipped(waitFor, binary.missing)]
    const n = size(options, 200, 60)
    const session = new Peers.TmuxSession(binary.path)
    return yield* Effect.acquireUseRelease(
      promise(() => session.start()),
      () =>
        Effect.gen(function*() {
          for (let i = 0; i < 5; i++) yield* promise(() => session.pollRoundTrip("true", TMUX_POLL_MS))
          const polled: Array<number> = []
          for (let i = 0; i < n; i++) polled.push(yield* promise(() => session.pollRoundTrip("true", TMUX_POLL_MS)))
          options.progress(`roundtrip: tmux capture-pane polling ${n}/${n}`)
          const waited: Array<number> = []
          for (let i = 0; i < n; i++) waited.push(yield* promise(() => session.waitForRoundTrip("true")))
          options.progress(`roundtrip: tmux wait-for ${n}/${n}`)
          return [
            {
              ...poll,
              ...distribution(polled),
              compared: [],
              notes: [
                `send-keys 'true; echo <sentinel>' Enter, then capture-pane every ${TMUX_POLL_MS} ms until the sentinel line shows; each tmux call is a process`
              ]
            },
            {
              ...waitFor,
              ...distribution(waited),
              compared: [],
              notes: ["send-keys 'true; tmux wait-for -S ch' Enter and block in `tmux wait-for ch` (no polling)"]
            }
          ] satisfies Array<Metric>
        }),
      () => promise(() => session.stop())
    )
  })

const pexpectRows = (options: RunOptions) =>
  Effect.gen(function*() {
    const tuned = { name: "roundtrip.true.pexpect", group, kind: "baseline" as const, unit: "ms" }
    const stock = { name: "roundtrip.true.pexpect-default", group, kind: "baseline" as const, unit: "ms" }
    const python = Peers.pexpectPython()
    if ("missing" in python) return [skipped(tuned, python.missing), skipped(stock, python.missing)]
    const fast = yield* promise(() => Peers.pexpectRoundTrips(python.path, size(options, 300, 200), 20, "none"))
    options.progress("roundtrip: pexpect")
    const slow = yield* promise(() => Peers.pexpectRoundTrips(python.path, size(options, 20, 10), 2, "default"))
    return [
      {
        ...tuned,
        ...distribution(fast.samples),
        compared: [],
        notes: [`pexpect ${fast.version}, sendline('true') + expect_exact(marker), delaybeforesend=None`]
      },
      {
        ...stock,
        ...distribution(slow.samples),
        compared: [],
        notes: [`pexpect ${slow.version} as shipped: delaybeforesend=0.05 sleeps 50 ms before every send`]
      }
    ] satisfies Array<Metric>
  })

/**
 * The service's own cost per send, with no kernel and no shell: `PtyService` over `ScriptedShell` (the
 * emulator, the readiness engine and the Effect runtime included; the output delivered one event-loop turn
 * after the write), in a fresh process (`InMemoryChild`). Warmed up first: the steady state of a
 * long-running process.
 */
const inMemory = (options: RunOptions) =>
  Effect.gen(function*() {
    const warmup = size(options, 5000, 1000)
    const blocks = 9
    const perBlock = size(options, 2000, 400)
    const { cpuPerSend } = yield* Forked.report<InMemoryReport>(
      "./InMemoryChild.js",
      [warmup, blocks, perBlock].map(String)
    )
    options.progress(`roundtrip: in memory ${blocks * perBlock} sends`)
    const stats = distribution([...cpuPerSend])
    return [{
      name: "roundtrip.true.in-memory",
      group,
      kind: "ours",
      unit: "µs CPU/send",
      ...stats,
      compared: [],
      target: {
        text: `≤ ${IN_MEMORY_MAX_US} µs CPU per send (issue 19)`,
        // a steady state: --quick's warm-up does not reach it
        met: options.quick ? null : allMet([stats.value === null ? null : stats.value <= IN_MEMORY_MAX_US])
      },
      notes: [
        `PtyService over ScriptedShell (no kernel, no shell) in a fresh process: its CPU per send (user + system, all threads), median of ${blocks} blocks of ${perBlock} after ${warmup} warm-up sends`,
        `the blocks in order: ${cpuPerSend.map((us) => us.toFixed(1)).join(", ")}`,
        ...(options.quick ? [`--quick warms up ${warmup} sends, not 5000: the target is not judged`] : [])
      ]
    }] satisfies Array<Metric>
  })

/** The shells measured side by side: bash (the default) and the other dialects that can run here. */
const SHELLS = ["bash", "zsh", "fish"] as const

const shellRow = (shell: string) => ({ name: `roundtrip.true.shell.${shell}`, group, unit: "ms" })

/**
 * `true` round trips with each shell as the session's shell, interleaved in blocks (drift on a shared
 * machine hits all alike): what each dialect's integration costs against bash's. No target (issue #20).
 */
const shellRows = (options: RunOptions) =>
  withTerminal(
    {},
    Effect.gen(function*() {
      const n = size(options, 300, 100)
      const blocks = 5
      const perBlock = n / blocks
      const sessions = yield* Effect.forEach(SHELLS, (shell) =>
        openShell({ name: `roundtrip-${shell}`, shell }).pipe(
          Effect.map((session) => ({ shell, session })),
          Effect.catchAll((error) => Effect.succeed({ shell, failed: String(error.message) }))
        ))
      const samples = new Map<string, { ms: Array<number>; reasons: Array<string>; exitCodes: Array<string> }>()
      const open = sessions.flatMap((entry) => "session" in entry ? [entry] : [])
      for (const { session, shell } of open) {
        samples.set(shell, { ms: [], reasons: [], exitCodes: [] })
        for (let i = 0; i < 20; i++) yield* session.send("true")
      }
      for (let block = 0; block < blocks; block++) {
        for (const { session, shell } of open) {
          const into = samples.get(shell)!
          for (let i = 0; i < perBlock; i++) {
            const [result, ms] = yield* timed(session.send("true"))
            into.ms.push(ms)
            into.reasons.push(result.waitReason)
            into.exitCodes.push(String(result.exitCode))
          }
        }
        options.progress(`roundtrip: ${(block + 1) * perBlock}/${n} per shell (${open.map((s) => s.shell).join(", ")})`)
      }
      const rows = sessions.map((entry): Metric => {
        const fields = { ...shellRow(entry.shell), kind: "ours" as const }
        if ("failed" in entry) return skipped(fields, `${entry.shell} could not be opened: ${entry.failed}`)
        const measured = samples.get(entry.shell)!
        return {
          ...fields,
          ...distribution(measured.ms),
          compared: [],
          notes: [
            `PtyService.send({ text: 'true' }) until settled, wall time, ${entry.shell} as the session's shell ` +
            `(terminal_open shell: "${entry.shell}"), ${blocks} blocks interleaved with the other shells`
          ],
          detail: { waitReason: tally(measured.reasons), exitCode: tally(measured.exitCodes) }
        }
      })
      const bash = rows.find((row) => row.name === shellRow("bash").name)
      return rows.map((row) =>
        row === bash || row.value === null ? row : { ...row, compared: [compare(row.value, bash)] }
      )
    })
  )

const ourRow = { name: "roundtrip.true", group, unit: "ms" }
const TARGET = "median ≤ 1 ms, ≤ 5 × the raw floor, faster than tmux (capture-pane polling)"

/** The group. */
export const roundTrip: Group = {
  name: group,
  description: "`true` round trip: ours vs the raw node-pty floor, tmux and pexpect; ours with bash, zsh, fish",
  run: (options) =>
    Effect.gen(function*() {
      const measured = yield* guard(
        [ourRow, { name: "roundtrip.true.floor", group, unit: "ms" }],
        Effect.map(floorAndOurs(options), (m): Array<Metric> => {
          const floor: Metric = {
            name: "roundtrip.true.floor",
            group,
            kind: "baseline",
            unit: "ms",
            ...distribution(m.floor),
            compared: [],
            notes: [
              "raw node-pty: bash --norc --noprofile with PS1='#P#'; write 'true\\r', wait for #P# in the raw bytes"
            ]
          }
          const ours = distribution(m.ours)
          const floorCpu: Metric = {
            name: "roundtrip.true.cpu.floor",
            group,
            kind: "baseline",
            unit: "ms CPU/send",
            ...distribution(m.floorCpu),
            compared: [],
            notes: ["this process's CPU time (user + system, all threads) per raw round trip, median of the blocks"]
          }
          const oursCpu = distribution(m.oursCpu)
          return [
            {
              ...ourRow,
              kind: "ours",
              ...ours,
              compared: [compare(ours.value, floor)],
              notes: ["PtyService.send({ text: 'true' }) until settled, wall time; default settings"],
              detail: { waitReason: m.reasons, exitCode: m.exitCodes }
            },
            floor,
            {
              name: "roundtrip.true.cpu",
              group,
              kind: "ours",
              unit: "ms CPU/send",
              ...oursCpu,
              compared: [compare(oursCpu.value, floorCpu)],
              notes: [
                "this process's CPU time (user + system, all threads) per PtyService.send('true'), median of the blocks: what limits many sessions at once"
              ]
            },
            floorCpu
          ]
        })
      )
      const memory = yield* guard(
        [{ name: "roundtrip.true.in-memory", group, unit: "µs CPU/send" }],
        inMemory(options)
      )
      const shells = yield* guard(SHELLS.map(shellRow), shellRows(options))
      const tmux = yield* guard([{ name: "roundtrip.true.tmux-poll", group, unit: "ms" }], tmuxRows(options))
      const pexpect = yield* guard([{ name: "roundtrip.true.pexpect", group, unit: "ms" }], pexpectRows(options))
      const [ours, floor] = measured
      if (ours === undefined || ours.value === null) return [...measured, ...memory, ...shells, ...tmux, ...pexpect]
      const poll = tmux.find((row) => row.name === "roundtrip.true.tmux-poll")
      const comparisons = [
        ...ours.compared,
        ...tmux.map((row) => compare(ours.value, row)),
        ...pexpect.map((row) => compare(ours.value, row))
      ]
      const checks = [
        ours.value <= 1,
        floor?.value == null ? null : ours.value <= 5 * floor.value,
        poll?.value == null ? null : ours.value < poll.value
      ]
      return [
        { ...ours, compared: comparisons, target: { text: TARGET, met: allMet(checks) } },
        ...measured.slice(1),
        ...memory,
        ...shells,
        ...tmux,
        ...pexpect
      ]
    })
}
