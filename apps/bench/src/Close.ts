/**
 * Close of a session holding a 100-process tree (10 subshells × 8 sleepers, 4 more sleepers, 5 that ignore
 * TERM, one `setsid` double-fork daemon; none handles TERM): how long `close` takes and who survives,
 * checked independently in `/proc` (pid + start time). With a cgroup per session (the default here when
 * cgroup v2 is writable) and with the identity-fenced sweep only (`containment: "sweep"`).
 */
import { Ids, PtyService } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import type { Group, RunOptions } from "./Harness.js"
import { guard, now, owner, pause, size, withTerminal } from "./Harness.js"
import type { Metric } from "./Metric.js"
import { allMet, distribution } from "./Metric.js"
import * as Proc from "./Proc.js"

const group = "close"
const TREE = 100
const TARGET = "median ≤ 50 ms, 0 survivors (100-process tree, no TERM handlers)"

const treeCommand = (tag: string) =>
  [
    `for b in 1 2 3 4 5 6 7 8 9 10; do ( for j in 1 2 3 4 5 6 7 8; do (exec -a ${tag}-leaf sleep 1000) & done; wait ) & done`,
    `for k in 1 2 3 4; do (exec -a ${tag}-leaf sleep 1000) & done`,
    `for k in 1 2 3 4 5; do (trap '' TERM; exec -a ${tag}-ignore sleep 1000) & done`,
    `setsid bash -c '(exec -a ${tag}-daemon sleep 1000) &'`
  ].join("; ")

const tagged = (tag: string) => Proc.all().filter((process) => Proc.cmdline(process.pid).startsWith(`${tag}-`))

interface Trial {
  readonly ms: number
  readonly survivors: number
  readonly survivorKinds: ReadonlyArray<string>
  readonly reported: number
  readonly processes: number
  readonly termHandlers: number
  readonly termIgnored: number
  readonly containment: string
}

const trial = (index: number) =>
  Effect.gen(function*() {
    const service = yield* PtyService.PtyService
    const opened = yield* service.open(owner, { name: `close-${index}` })
    const id = Ids.SessionId.make(opened.sessionId)
    const tag = `atb${process.pid}x${index}x${Math.random().toString(36).slice(2, 6)}`
    yield* service.send(owner, id, { text: treeCommand(tag) })
    const deadline = now() + 20_000
    let captured: Array<Proc.Stat> = []
    while (now() < deadline) {
      const processes = Proc.all()
      const inTree = Proc.tree(opened.pid, processes).filter((p) => p.pid !== opened.pid)
      const daemons = processes.filter((p) => Proc.cmdline(p.pid).startsWith(`${tag}-daemon`))
      captured = [...inTree, ...daemons.filter((d) => !inTree.some((p) => p.pid === d.pid))]
      const sleepers = tagged(tag).length
      if (captured.length >= TREE && sleepers === 90) break
      yield* pause(20)
    }
    const termHandlers = captured.filter((p) => Proc.handlesTerm(p.pid)).length
    const termIgnored = captured.filter((p) => Proc.ignoresTerm(p.pid)).length
    const started = now()
    const closed = yield* service.close(owner, id).pipe(
      Effect.map((result) => ({ survivors: result.survivors.length })),
      Effect.catchTag("CleanupFailed", (error) => Effect.succeed({ survivors: error.survivors.length }))
    )
    const ms = now() - started
    const survivors = [...captured, ...tagged(tag)].filter(Proc.alive)
    const unique = survivors.filter((p, i) => survivors.findIndex((q) => q.pid === p.pid) === i)
    const kinds = unique.map((p) => Proc.cmdline(p.pid).split(" ")[0]?.replace(`${tag}-`, "") || p.comm)
    Proc.killSurvivors(unique)
    return {
      ms,
      survivors: unique.length,
      survivorKinds: kinds,
      reported: closed.survivors,
      processes: captured.length,
      termHandlers,
      termIgnored,
      containment: opened.containment
    } satisfies Trial
  })

const measure = (containment: "auto" | "sweep", options: RunOptions) =>
  withTerminal(
    {},
    Effect.gen(function*() {
      const rounds = size(options, 7, 3)
      const trials: Array<Trial> = []
      for (let index = 0; index < rounds; index++) {
        trials.push(yield* trial(index))
        options.progress(`close: ${containment} ${index + 1}/${rounds}`)
      }
      return trials
    }),
    { containment }
  )

const row = (name: string, containment: "auto" | "sweep", options: RunOptions) =>
  Effect.map(measure(containment, options), (trials): Metric => {
    const stats = distribution(trials.map((t) => t.ms))
    const survivors = trials.reduce((total, t) => total + t.survivors, 0)
    const kinds = [...new Set(trials.map((t) => t.containment))]
    return {
      name,
      group,
      kind: "ours",
      unit: "ms",
      ...stats,
      compared: [],
      target: {
        text: TARGET,
        met: allMet([stats.value !== null && stats.value <= 50, survivors === 0])
      },
      notes: [
        `containment: ${kinds.join(", ")}; processes per tree: ${
          [...new Set(trials.map((t) => t.processes))].join(", ")
        }`,
        `survivors (checked in /proc, all trials): ${survivors}${
          survivors > 0 ? ` (${[...new Set(trials.flatMap((t) => t.survivorKinds))].join(", ")})` : ""
        }; reported by close: ${trials.reduce((total, t) => total + t.reported, 0)}`,
        `TERM handlers in the tree: ${Math.max(...trials.map((t) => t.termHandlers))}; TERM ignored by: ${
          Math.max(...trials.map((t) => t.termIgnored))
        }`
      ],
      detail: { trials }
    }
  })

/** The group. */
export const close: Group = {
  name: group,
  description: "close of a 100-process tree (time, survivors), cgroup and sweep-only",
  run: (options) =>
    Effect.gen(function*() {
      const cgroup = yield* guard(
        [{ name: "close.tree100.cgroup", group, unit: "ms", target: TARGET }],
        Effect.map(row("close.tree100.cgroup", "auto", options), (r) => [r])
      )
      const sweep = yield* guard(
        [{ name: "close.tree100.sweep", group, unit: "ms", target: TARGET }],
        Effect.map(row("close.tree100.sweep", "sweep", options), (r) => [r])
      )
      return [...cgroup, ...sweep]
    })
}
