import { ShellMarkers } from "@agent-terminal/terminal"
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as ZshDialect from "../src/ZshDialect.js"

const nonce = "0123456789abcdef01234567"
const launch = ZshDialect.dialect.launch({ nonce, shell: "/usr/bin/zsh" })

/** Run `script` in a real zsh after the integration, as the session's `.zshrc` runs it (no rc file read). */
const zsh = (script: string) =>
  spawnSync("zsh", ["-d", "-f", "-c", `eval "$AGENT_TERMINAL_INIT"; ${script}`], {
    env: { PATH: process.env.PATH!, ...launch.env },
    encoding: "utf8"
  })

describe("the zsh dialect", () => {
  it("starts zsh interactive without global rc files, its ZDOTDIR the package's own, whose .zshrc only runs the integration", () => {
    expect(launch.file).toBe("/usr/bin/zsh")
    expect(launch.args).toEqual(["-d", "-i"])
    expect(launch.env.ZDOTDIR).toBe(ZshDialect.zdotdir)
    expect(fs.readdirSync(ZshDialect.zdotdir)).toEqual([".zshrc"])
    const rc = fs.readFileSync(path.join(ZshDialect.zdotdir, ".zshrc"), "utf8")
    expect(rc.split("\n").filter((line) => line !== "" && !line.startsWith("#"))).toEqual([
      "eval \"$AGENT_TERMINAL_INIT\""
    ])
  })

  it("the prompt zsh expands is the markers around the prompt text, with the last status; PS2 carries its marker", () => {
    const ran = zsh("__agent_terminal_precmd; (exit 3); print -rn -- \"${(%)PS1}|${(%)PS2}\"")
    expect(ran.stderr).toBe("")
    const [ps1, ps2] = ran.stdout.split("|")
    expect(ps1).toBe(
      `\x1b[?2004h${ShellMarkers.encode("D", nonce, "3")}${ZshDialect.promptText}${ShellMarkers.encode("B", nonce)}`
    )
    expect(ps2).toBe(`${ShellMarkers.encode("P", nonce)}> `)
  })

  it("re-asserts the prompt before every prompt, and hides the integration from child processes", () => {
    const ran = zsh(
      "PS1='broken> '; for f in $precmd_functions; do $f; done; print -rn -- \"${(%)PS1}\"; " +
        "print -n \"|${AGENT_TERMINAL_INIT-unset}|${ZDOTDIR-unset}|\"; env | grep -c AGENT_TERMINAL"
    )
    expect(ran.stdout).toBe(
      `\x1b[?2004h${ShellMarkers.encode("D", nonce, "0")}% ${ShellMarkers.encode("B", nonce)}|unset|unset|0\n`
    )
  })

  it("the command-start marker is printed by preexec; ! and comments mean what they mean in bash", () => {
    const ran = zsh(
      "for f in $preexec_functions; do $f; done; [[ -o bang_hist ]] || print -n nobang; " +
        "[[ -o interactive_comments ]] && print -n ' comments'; bindkey -lL main"
    )
    expect(ran.stdout).toBe(`${ShellMarkers.encode("C", nonce)}nobang commentsbindkey -A emacs main\n`)
  })
})
