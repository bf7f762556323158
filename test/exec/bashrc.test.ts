import { NodeTerminal } from "@agent-terminal/node"
import { afterAll, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { testConfig } from "../support/terminal.js"
import { run, script } from "./support.js"

// A home whose ~/.bashrc says it was read. Node gives a child's stdin as a socket, and bash -c with a socket on
// stdin at shell level 0 reads ~/.bashrc, as for a remote shell: a user's pyenv or nvm init ran in every run
// (slow, and under load a 1 s run printed nothing but pyenv's complaint). The host environment here has no
// SHLVL, as a server started by a service manager or an MCP client has none.
const home = fs.mkdtempSync(path.join(os.tmpdir(), "at-exec-home-"))
fs.writeFileSync(path.join(home, ".bashrc"), "echo BASHRC-WAS-READ\n")
const { SHLVL: _level, ...hostEnv } = process.env
afterAll(() => fs.rmSync(home, { recursive: true, force: true }))

layer(NodeTerminal.layer(testConfig, { hostEnv: { ...hostEnv, HOME: home } }), { excludeTestServices: true })(
  "exec: a shell run is not a login or remote shell",
  (it) => {
    for (const mode of ["child", "pty"] as const) {
      it.scoped(`${mode}: bash -c does not read the user's ~/.bashrc`, () =>
        Effect.gen(function*() {
          const result = yield* run({ spawn: script(mode, "echo home=$HOME") })
          expect(result.output).toContain(`home=${home}`)
          expect(result.output).not.toContain("BASHRC-WAS-READ")
        }))
    }
  }
)
