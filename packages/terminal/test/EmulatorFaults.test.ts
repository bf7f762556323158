import { describe, expect, it } from "@effect/vitest"
import xterm from "@xterm/headless"
import type { Core } from "../src/internal/xtermCore.js"
import { coreOf, recoverFromThrow } from "../src/internal/xtermCore.js"
import { make } from "./support/emulator.js"

describe("Emulator: sequences xterm cannot take", () => {
  it("erases above at the bottom row past the last column (xterm 6.0.0 throws there) and goes on", () => {
    const { emulator } = make({ cols: 10, rows: 4 })
    emulator.write("top\r\nsecond\r\n\x1b[4;1H")
    emulator.write(`${"y".repeat(10)}\x1b[1Jafter`)
    expect(emulator.faults).toBe(0)
    // rows above erased, the cursor row erased through the cursor; "after" wraps onto a new row
    expect(emulator.screen().rows).toEqual(["", "", "", "after"])
    emulator.write("\r\nnext")
    expect(emulator.screen().rows.at(-1)).toBe("next")
    emulator.dispose()
  })

  it("erase above unwraps the row below the cursor, not a row of the scrollback", () => {
    const { emulator } = make({ cols: 10, rows: 3 })
    // a wrapped line scrolled above the screen, not logged yet when the erase comes (same write): its
    // continuation row sits at the scrollback index equal to the cursor's screen row + 1
    emulator.write(`${"w".repeat(15)}\r\nab\r\ncd\r\nef\x1b[1;10H\x1b[1J`)
    expect(emulator.log.get(0)).toBe("w".repeat(15))
    emulator.dispose()
  })

  it("a handler that throws leaves xterm frozen; recovered, the next write parses", () => {
    const open = () => {
      const terminal = new xterm.Terminal({ cols: 20, rows: 3, allowProposedApi: true, logLevel: "off" })
      terminal.parser.registerCsiHandler({ final: "z" }, () => {
        throw new Error("handler bug")
      })
      return { terminal, core: coreOf(terminal) as Core }
    }
    const firstRow = (terminal: xterm.Terminal) => terminal.buffer.active.getLine(0)?.translateToString(true)

    const frozen = open()
    expect(() => frozen.core.writeSync("a\x1b[zlost")).toThrow("handler bug")
    frozen.core.writeSync("b")
    expect(firstRow(frozen.terminal)).toBe("a")
    frozen.terminal.dispose()

    const recovered = open()
    expect(() => recovered.core.writeSync("a\x1b[zlost")).toThrow("handler bug")
    recoverFromThrow(recovered.core)
    recovered.core.writeSync("b\x1b[31mc")
    expect(firstRow(recovered.terminal)).toBe("abc")
    recovered.terminal.dispose()
  })
})
