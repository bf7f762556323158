import { TerminalConfig } from "@agent-terminal/core"
import { HelpDoc, Options } from "@effect/cli"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import { defaults, sandboxOptions, settingsOptions } from "../src/McpOptions.js"

/** Each settings option and the field of the settings Schema whose default its help states. */
const fieldOf: Record<string, keyof typeof defaults> = {
  timeoutMs: "timeoutMs",
  idleSilenceMs: "idleSilenceMs",
  openTimeoutMs: "openTimeoutMs",
  disposeGraceMs: "disposeGraceMs",
  maxResultBytes: "maxResultBytes",
  maxInputBytes: "maxInputBytes",
  maxReadBytes: "maxReadBytes",
  scrollbackLines: "scrollbackLines",
  scrollbackMaxBytes: "scrollbackMaxBytes",
  cols: "cols",
  rows: "rows",
  shell: "shell",
  recordingMaxBytes: "recordingMaxBytes",
  controlIdleMs: "controlIdleMs",
  recordingsMaxBytes: "recordingsMaxBytes",
  recordingsMaxAgeMs: "recordingsMaxAgeMs",
  maxTerminalsPerOwner: "maxTerminalsPerOwner",
  maxTasksPerOwner: "maxTasksPerOwner",
  maxTerminals: "maxTerminals",
  maxTasks: "maxTasks"
}

const help = (option: Options.Options<unknown>) => HelpDoc.toAnsiText(Options.getHelp(option)).replace(/\s+/g, " ")

describe("the CLI's options", () => {
  it("take their defaults from the settings Schema, the values the service runs with", () =>
    Effect.gen(function*() {
      const settings = yield* TerminalConfig.make({})
      expect({ ...settings, defaultCwd: undefined, memoryMaxBytes: undefined }).toEqual({
        ...defaults,
        defaultCwd: undefined,
        memoryMaxBytes: undefined
      })
      const options = settingsOptions as Record<string, Options.Options<unknown>>
      for (const [name, field] of Object.entries(fieldOf)) {
        expect(help(options[name]!), name).toContain(`default ${defaults[field]}`)
      }
      expect(help(sandboxOptions.pidsMax)).toContain(`default ${defaults.pidsMax}`)
    }).pipe(Effect.runPromise))

  it("write no settings default a second time: no number after 'default' in the options' source", () => {
    const source = fs.readFileSync(fileURLToPath(new URL("../src/McpOptions.ts", import.meta.url)), "utf8")
    const settings = source.slice(
      source.indexOf("export const settingsOptions"),
      source.indexOf("export const deployment")
    )
    expect(settings.match(/default \d/g) ?? []).toEqual([])
  })
})
