import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import { Discovery, Placement } from "../src/index.js"

const machine = (name: string, fields: Partial<Discovery.Figures> = {}) =>
  new Discovery.Capacity({
    machine: name,
    run: "r",
    terminals: 0,
    maxTerminals: 10,
    free: 10,
    load: 0,
    memoryFree: 1e9,
    labels: [],
    ...fields
  })

const chosen = (result: Either.Either<Discovery.Capacity, unknown>) =>
  Either.match(result, {
    onLeft: (error) => `error: ${(error as { reason: string }).reason}`,
    onRight: (m) => m.machine
  })

describe("Placement.choose", () => {
  const fleet = [
    machine("m1", { free: 3, terminals: 7 }),
    machine("m2", { free: 9, terminals: 1, labels: ["linux"] }),
    machine("m3", { free: 5, load: 0.2, labels: ["gpu", "linux"] }),
    machine("m4", { free: 5, load: 0.1, labels: ["gpu"] })
  ]
  it("takes the machine with the most room", () => {
    expect(chosen(Placement.choose(fleet))).toBe("m2")
  })
  it("among the machines with every label asked, the most room, then the least load", () => {
    expect(chosen(Placement.choose(fleet, { labels: ["gpu"] }))).toBe("m4")
    expect(chosen(Placement.choose(fleet, { labels: ["gpu", "linux"] }))).toBe("m3")
    expect(chosen(Placement.choose(fleet, { labels: ["tpu"] }))).toBe("error: no machine has them")
  })
  it("a machine by name, when it is live and has room", () => {
    expect(chosen(Placement.choose(fleet, { machine: "m1" }))).toBe("m1")
    expect(chosen(Placement.choose(fleet, { machine: "m9" }))).toBe("error: it is not in the fleet now")
    expect(chosen(Placement.choose([machine("m1", { free: 0, terminals: 10 })], { machine: "m1" }))).toBe(
      "error: it has no free room (10 terminals)"
    )
  })
  it("a full fleet, or none", () => {
    expect(chosen(Placement.choose([machine("m1", { free: 0 })]))).toBe("error: every machine is full")
    expect(chosen(Placement.choose([]))).toBe("error: no machine is in the fleet now")
  })
  it("equal room and load: the name decides, whatever the order", () => {
    const same = [machine("b"), machine("a"), machine("c")]
    expect(chosen(Placement.choose(same))).toBe("a")
    expect(chosen(Placement.choose([...same].reverse()))).toBe("a")
  })
})
