/**
 * zsh and fish as the session's shell inside the read-only bubblewrap sandbox: the integration needs
 * nothing written (zsh's ZDOTDIR ships with the package and is only read; fish's comes from the
 * environment), so readiness and exit codes are the same as outside.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { makeWorkspace, openAs, SandboxedTerminal } from "../security/support.js"
import { owner } from "../support/terminal.js"

const workspace = makeWorkspace("shells-ro")

layer(SandboxedTerminal({ mode: "read-only", workspace }), { excludeTestServices: true })(
  "zsh and fish in the read-only sandbox (bubblewrap)",
  (it) => {
    for (const shell of ["zsh", "fish"] as const) {
      it.scoped(`${shell}: opens by prompt, reports exit codes and continuations, and cannot write`, () =>
        Effect.gen(function*() {
          const { opened, send } = yield* openAs(owner, { shell })
          expect(opened.shell).toBe(shell)
          expect(opened.motd.endsWith(shell === "zsh" ? "% " : "> ")).toBe(true)
          expect(yield* send("pwd")).toMatchObject({ waitReason: "prompt", exitCode: 0, output: workspace })
          expect(yield* send("touch new-file")).toMatchObject({ waitReason: "prompt", exitCode: 1 })
          expect((yield* send("echo \"abc")).continuation).toBe(true)
          expect(yield* send("def\"")).toMatchObject({ waitReason: "prompt", output: "abc\ndef" })
        }))
    }
  }
)
