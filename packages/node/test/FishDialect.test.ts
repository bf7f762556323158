import { ShellMarkers } from "@agent-terminal/terminal"
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as FishDialect from "../src/FishDialect.js"

const nonce = "0123456789abcdef01234567"
const launch = FishDialect.dialect.launch({ nonce, shell: "/usr/bin/fish" })

/** Run `script` in a real fish after the integration, the way the session runs it (`--no-config`). */
const fish = (script: string) =>
  spawnSync("fish", ["--no-config", "-c", `eval $AGENT_TERMINAL_INIT; ${script}`], {
    env: { PATH: process.env.PATH!, HOME: "/nonexistent", ...launch.env },
    encoding: "utf8"
  })

describe("the fish dialect", () => {
  it("starts fish without its configuration, the integration evaluated from the environment", () => {
    expect(launch.file).toBe("/usr/bin/fish")
    expect(launch.args).toEqual(["--no-config", "--init-command", "eval $AGENT_TERMINAL_INIT"])
    expect(spawnSync("fish", ["--no-execute", "-c", launch.env.AGENT_TERMINAL_INIT!]).status).toBe(0)
  })

  it("the prompt is the markers around the prompt text, with the last status", () => {
    const ran = fish("false; __agent_terminal_prompt")
    expect(ran.stderr).toBe("")
    expect(ran.stdout).toBe(
      `${ShellMarkers.encode("D", nonce, "1")}${FishDialect.promptText}${ShellMarkers.encode("B", nonce)}`
    )
  })

  it("re-asserts the prompt functions before every prompt; the command start turns bracketed paste off", () => {
    const ran = fish(
      "function fish_prompt; echo 'broken> '; end; function fish_right_prompt; echo right; end; " +
        "emit fish_prompt; true; fish_prompt; fish_right_prompt; emit fish_preexec"
    )
    expect(ran.stdout).toBe(
      `\x1b[?2004h${ShellMarkers.encode("D", nonce, "0")}> ${ShellMarkers.encode("B", nonce)}` +
        `\x1b[?2004l${ShellMarkers.encode("C", nonce)}`
    )
  })

  it("hides the integration's variable from child processes, keeps no history file and no greeting", () => {
    const ran = fish("env | grep -c AGENT_TERMINAL; echo \"[$fish_history][$fish_greeting]\"")
    expect(ran.stdout).toBe("0\n[][]\n")
  })

  it("Enter, on either line ending, is the integration's (over fish's own preset)", () => {
    const ran = fish("bind --user \\r; bind --user \\n")
    expect(ran.stdout).toBe("bind \\r __agent_terminal_enter\nbind \\n __agent_terminal_enter\n")
  })
})
