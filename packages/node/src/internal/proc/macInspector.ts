/**
 * The macOS inspector over any source of `ps` output (the real command or a test fixture).
 */
import { ProcessInspector } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { parsePsTable } from "./psTable.js"
import { descendants, toProcessInfo } from "./tree.js"

const noProbe: ProcessInspector.Probe = { _tag: "Miss", reason: "no stdin probe on this platform" }

/** The inspector given a `ps` runner: `selection` is `["-ax"]` or `["-p", pid]`; undefined when `ps` failed. */
export const makeWith = (
  ps: (selection: ReadonlyArray<string>) => Effect.Effect<string | undefined>
): ProcessInspector.ProcessInspector["Type"] =>
  ProcessInspector.ProcessInspector.of({
    exact: false,
    foregroundGroup: (terminal) =>
      ps(["-p", String(terminal.shellPid)]).pipe(
        Effect.map((text) => {
          const row = parsePsTable(text ?? "").find((row) => row.pid === terminal.shellPid)
          return row !== undefined && row.tpgid > 0 ? Option.some(row.tpgid) : Option.none()
        })
      ),
    probe: () => Effect.succeed(noProbe),
    processTree: (rootPid) =>
      ps(["-ax"]).pipe(Effect.map((text) => descendants(parsePsTable(text ?? ""), rootPid).map(toProcessInfo)))
  })
