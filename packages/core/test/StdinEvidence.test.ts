import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { Probe } from "../src/ProcessInspector.js"
import * as ProcessInspector from "../src/ProcessInspector.js"
import * as StdinEvidence from "../src/StdinEvidence.js"

const snapshot = (pgid: number, waitingOnTerminal: boolean, readCalls: number | "unknown" = 100): Probe => ({
  _tag: "Snapshot",
  pgid,
  members: [pgid],
  waitingOnTerminal,
  readCalls: readCalls === "unknown" ? undefined : readCalls
})
const miss: Probe = { _tag: "Miss", reason: "pid vanished" }

/** The `ready` flag after each probe. */
const readiness = (before: Probe, after: ReadonlyArray<Probe>): Array<boolean> => {
  let state = StdinEvidence.initial(before)
  return after.map((probe) => {
    const step = StdinEvidence.step(state, probe)
    state = step.state
    return step.ready
  })
}

describe("StdinEvidence", () => {
  it("does not reuse the wait that existed before the write", () => {
    const waiting = snapshot(10, true, 100)
    expect(readiness(waiting, [waiting, waiting, waiting])).toEqual([false, false, false])
  })

  it("counts a wait after the group left the wait and returned", () => {
    expect(readiness(snapshot(10, true), [snapshot(10, true), snapshot(10, false), snapshot(10, true)])).toEqual([
      false,
      false,
      true
    ])
    expect(StdinEvidence.run(snapshot(10, true), [snapshot(10, false), snapshot(10, true)]).state.evidence).toBe(
      "left_wait"
    )
  })

  it("stays ready once input was consumed, and is not ready while the group is busy", () => {
    expect(readiness(snapshot(10, true), [snapshot(10, false), snapshot(10, true), snapshot(10, false)])).toEqual([
      false,
      true,
      false
    ])
  })

  it("counts a change of foreground group: the shell started a program, or it exited back", () => {
    const shell = 10
    const python = 20
    expect(readiness(snapshot(shell, true), [snapshot(python, true)])).toEqual([true])
    expect(readiness(snapshot(python, true), [snapshot(python, true), snapshot(shell, true)])).toEqual([false, true])
    expect(StdinEvidence.run(snapshot(shell, true), [snapshot(python, true)]).state.evidence).toBe("group_changed")
  })

  it("counts rising read counters of the same group", () => {
    expect(readiness(snapshot(10, true, 100), [snapshot(10, true, 100), snapshot(10, true, 106)])).toEqual([
      false,
      true
    ])
    expect(StdinEvidence.run(snapshot(10, true, 100), [snapshot(10, true, 101)]).state.evidence).toBe("reads_rose")
  })

  it("does not count counters that fell or are unknown", () => {
    expect(readiness(snapshot(10, true, 100), [snapshot(10, true, 90), snapshot(10, true, 90)])).toEqual([false, false])
    expect(readiness(snapshot(10, true, "unknown"), [snapshot(10, true, 500)])).toEqual([false])
    expect(readiness(snapshot(10, true, 100), [snapshot(10, true, "unknown"), snapshot(10, true, 500)])).toEqual([
      false,
      false
    ])
    // Once known again, a later rise counts.
    expect(
      readiness(snapshot(10, true, 100), [
        snapshot(10, true, "unknown"),
        snapshot(10, true, 500),
        snapshot(10, true, 501)
      ])
    ).toEqual([false, false, true])
  })

  it("a miss in the middle is neither a wait nor leaving one", () => {
    const waiting = snapshot(10, true, 100)
    expect(readiness(waiting, [miss, waiting, miss, waiting])).toEqual([false, false, false, false])
    expect(readiness(waiting, [miss, snapshot(10, true, 101)])).toEqual([false, true])
    expect(readiness(waiting, [snapshot(10, false), miss, snapshot(10, true)])).toEqual([false, false, true])
    expect(readiness(waiting, [snapshot(10, false), miss]).at(-1)).toBe(false)
  })

  it("before = miss: only evidence seen after the write counts", () => {
    expect(readiness(miss, [snapshot(10, true), snapshot(10, true)])).toEqual([false, false])
    expect(readiness(miss, [snapshot(10, true, 100), snapshot(10, true, 103)])).toEqual([false, true])
    expect(readiness(miss, [snapshot(10, true), snapshot(20, true)])).toEqual([false, true])
    expect(readiness(miss, [snapshot(10, false), snapshot(10, true)])).toEqual([false, true])
    expect(readiness(miss, [miss, miss])).toEqual([false, false])
  })

  it("a busy group before the write needs evidence too", () => {
    expect(readiness(snapshot(10, false, 100), [snapshot(10, true, 100)])).toEqual([false])
    expect(readiness(snapshot(10, false, 100), [snapshot(10, true, 104)])).toEqual([true])
  })

  describe("with byte counters (rchar)", () => {
    const bytes = (pgid: number, waitingOnTerminal: boolean, readBytes: number): Probe => ({
      _tag: "Snapshot",
      pgid,
      members: [pgid],
      waitingOnTerminal,
      readCalls: readBytes,
      readBytes
    })
    const step = (before: Probe, written: number, after: ReadonlyArray<Probe>) => {
      let state = StdinEvidence.initial(before, written)
      return after.map((probe) => {
        const next = StdinEvidence.step(state, probe)
        state = next.state
        return next.ready
      })
    }

    it("a line editor back in its wait after the first of many bytes is not ready", () => {
      // readline reads "print(6*7)\r" one byte per read: waiting again after 1, 2, 5 bytes, then after all 11.
      expect(step(bytes(10, true, 1000), 11, [
        bytes(10, true, 1001),
        bytes(10, false, 1002),
        bytes(10, true, 1005),
        bytes(10, true, 1011)
      ])).toEqual([false, false, false, true])
      expect(StdinEvidence.run(bytes(10, true, 1000), [bytes(10, true, 1011)], 11).state.evidence).toBe(
        "bytes_consumed"
      )
    })

    it("leaving the wait is no evidence while the bytes are not all read", () => {
      expect(step(bytes(10, true, 0), 6, [bytes(10, false, 3), bytes(10, true, 3)])).toEqual([false, false])
    })

    it("a change of group still counts at once", () => {
      expect(step(bytes(10, true, 0), 11, [bytes(20, true, 50)])).toEqual([true])
    })

    it("without a counter before the write, the other evidence applies", () => {
      expect(step(snapshot(10, true), 6, [bytes(10, false, 3), bytes(10, true, 3)])).toEqual([false, true])
    })
  })

  describe("the shell took the command line (witness)", () => {
    it("with no probe before the write, a wait after the line was taken is ready at once", () => {
      const taken = StdinEvidence.witness(StdinEvidence.initial(miss, 7), "line_taken")
      expect(StdinEvidence.step(taken, snapshot(10, true)).ready).toBe(true)
      expect(StdinEvidence.step(taken, snapshot(10, false)).ready).toBe(false)
      expect(StdinEvidence.step(taken, miss).ready).toBe(false)
    })

    it("without it, the same waits are not ready", () => {
      expect(readiness(miss, [snapshot(10, true), snapshot(10, true)])).toEqual([false, false])
    })

    it("keeps the first evidence", () => {
      const left = StdinEvidence.run(snapshot(10, true), [snapshot(10, false)]).state
      expect(StdinEvidence.witness(left, "line_taken").evidence).toBe("left_wait")
    })
  })

  it.effect("drives from the scripted inspector, one probe at a time", () =>
    Effect.gen(function*() {
      const inspector = yield* ProcessInspector.ProcessInspector
      const terminal = { shellPid: 10, ttyPath: undefined }
      const before = yield* inspector.probe(terminal)
      let state = StdinEvidence.initial(before)
      const ready: Array<boolean> = []
      for (let i = 0; i < 4; i++) {
        const step = StdinEvidence.step(state, yield* inspector.probe(terminal))
        state = step.state
        ready.push(step.ready)
      }
      expect(ready).toEqual([false, false, false, true])
    }).pipe(
      Effect.provide(ProcessInspector.layerTest({
        probes: [snapshot(10, true), snapshot(10, true), miss, snapshot(10, false), snapshot(10, true)]
      }))
    ))
})
