import { describe, expect, it } from "@effect/vitest"
import { ShellState } from "../src/internal/session/shellState.js"

const kinds = ["C", "D", "B"] as const

const recorded = (count: number) => {
  const shell = new ShellState()
  for (let i = 0; i < count; i++) {
    shell.record({ kind: kinds[i % 3]!, exitCode: kinds[i % 3] === "D" ? 0 : undefined }, { row: i, col: 0 })
  }
  return shell
}

describe("ShellState", () => {
  it("gives the markers after a sequence number, oldest first", () => {
    const shell = recorded(10)
    expect(shell.seq).toBe(10)
    expect(shell.since(7).map((marker) => marker.seq)).toEqual([8, 9, 10])
    expect(shell.since(10)).toEqual([])
    expect(shell.since(0).map((marker) => marker.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    expect(shell.state).toBe("running")
  })

  it("keeps the newest 64 however many came, in order", () => {
    for (const count of [63, 64, 65, 127, 128, 129, 1000]) {
      const shell = recorded(count)
      const all = shell.since(0).map((marker) => marker.seq)
      expect(all).toEqual(Array.from({ length: Math.min(64, count) }, (_, i) => count - Math.min(64, count) + 1 + i))
      expect(shell.since(count - 2).map((marker) => marker.seq)).toEqual([count - 1, count])
      expect(shell.since(count - 2).map((marker) => marker.at.row)).toEqual([count - 2, count - 1])
    }
  })

  it("tracks the shell's state from the newest marker", () => {
    const shell = new ShellState()
    expect(shell.state).toBe("starting")
    shell.record({ kind: "D", exitCode: 1 }, { row: 0, col: 0 })
    shell.record({ kind: "B", exitCode: undefined }, { row: 0, col: 2 })
    expect(shell.state).toBe("prompt")
    shell.record({ kind: "P", exitCode: undefined }, { row: 1, col: 0 })
    expect(shell.state).toBe("continuation")
    expect(shell.since(1).map((marker) => marker.kind)).toEqual(["B", "P"])
    expect(shell.since(0)[0]?.exitCode).toBe(1)
  })
})
