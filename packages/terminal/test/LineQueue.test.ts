import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import { LineQueue } from "../src/internal/queue.js"

type Op = { readonly push: number } | { readonly shift: true } | { readonly set: number } | { readonly clear: true }

const op: FastCheck.Arbitrary<Op> = FastCheck.oneof(
  { weight: 6, arbitrary: FastCheck.integer({ min: 1, max: 40 }).map((push) => ({ push })) },
  { weight: 4, arbitrary: FastCheck.constant({ shift: true as const }) },
  { weight: 1, arbitrary: FastCheck.nat(100).map((set) => ({ set })) },
  { weight: 1, arbitrary: FastCheck.constant({ clear: true as const }) }
)

describe("LineQueue", () => {
  it("keeps its lines in order, as an array would, across wrap-arounds and growth", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.array(op, { maxLength: 120 }), (ops) => {
        const queue = new LineQueue()
        const model: Array<{ row: number; text: string; bytes: number }> = []
        let next = 0
        for (const step of ops) {
          if ("push" in step) {
            for (let i = 0; i < step.push; i++) {
              const line = { row: next, text: `line ${next}`, bytes: next % 7 }
              next++
              queue.push(line.row, line.text, line.bytes)
              model.push(line)
            }
          } else if ("shift" in step) {
            queue.shift()
            model.shift()
          } else if ("set" in step) {
            if (model.length === 0) continue
            const index = step.set % model.length
            queue.set(index, `set ${step.set}`, step.set)
            model[index] = { ...model[index]!, text: `set ${step.set}`, bytes: step.set }
          } else {
            queue.clear()
            model.length = 0
          }
          expect(queue.size).toBe(model.length)
          model.forEach((line, index) => {
            expect([queue.row(index), queue.text(index), queue.bytes(index)]).toEqual([line.row, line.text, line.bytes])
          })
        }
      }),
      { numRuns: 200 }
    )
  })
})
