import { EnvPolicy, Ids, PtyService, Sandbox, TaskRuntime } from "@agent-terminal/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeTerminal from "../src/NodeTerminal.js"
import * as PowerShellDialect from "../src/PowerShellDialect.js"
import * as ScriptedPwsh from "./helpers/scriptedPwsh.js"

const owner = Ids.OwnerId.make("pwsh-test")

/** The service with the real dialect registry, over the scripted pwsh (not a real one: none can be installed). */
const service = (log: ScriptedPwsh.PwshLog, shell = "pwsh") =>
  PtyService.layerConfig({ shell, idleSilenceMs: 2000, openTimeoutMs: 5000 }).pipe(
    Layer.provideMerge(Layer.mergeAll(
      ScriptedPwsh.layer(log),
      NodeTerminal.dialectsLayer,
      EnvPolicy.layer({ host: { PATH: "/usr/bin" }, cwd: "/tmp" }),
      TaskRuntime.layer,
      Sandbox.layerNone
    ))
  )

const open = Effect.gen(function*() {
  const terminals = yield* PtyService.PtyService
  const opened = yield* terminals.open(owner, { cwd: "/tmp" })
  const id = Ids.SessionId.make(opened.sessionId)
  yield* Effect.addFinalizer(() => terminals.close(owner, id).pipe(Effect.ignore))
  return { opened, send: (text: string) => terminals.send(owner, id, { text }) }
})

describe("the PowerShell dialect, against a scripted pwsh 7 transcript", () => {
  it.scopedLive("types its start-up line once pwsh waits at its first prompt, then settles on the controlled one", () => {
    const log = ScriptedPwsh.makeLog()
    return Effect.gen(function*() {
      const { opened } = yield* open
      expect(opened.shell).toBe("pwsh")
      expect(log.args).toEqual(["-NoLogo", "-NoProfile"])
      expect(log.env).toMatchObject({ NO_COLOR: "1" })
      // nothing was typed before .NET had its answer to the cursor question (it would have been lost)
      expect(log.typedBeforeAnswer).toEqual([])
      expect(log.lines[0]).toBe(PowerShellDialect.startupLine)
      expect(opened.motd.endsWith("PS> ")).toBe(true)
      expect(opened.motd).toContain("PS /tmp> ")
      // the nonce never reaches the screen: the typed line only names the variable that holds the init
      const nonce = /7331;D;([0-9a-f]+)/.exec(log.env!.AGENT_TERMINAL_INIT!)![1]!
      expect(opened.motd).not.toContain(nonce)
    }).pipe(Effect.provide(service(log)))
  })

  it.scopedLive("pins the console to UTF-8 before anything else and makes its prompt read-only", () =>
    Effect.sync(() => {
      const init = PowerShellDialect.initScript("00ff").split("\n")
      expect(init[0]).toContain("Remove-Item Env:AGENT_TERMINAL_INIT")
      expect(init[1]).toContain("[Console]::OutputEncoding")
      expect(init[1]).toContain("UTF8Encoding")
      expect(init.find((line) => line.includes("function:global:prompt"))).toContain("-Options ReadOnly")
    }))

  it.scopedLive("gives output without the echo, and exit statuses as $? and $LASTEXITCODE tell them", () => {
    const log = ScriptedPwsh.makeLog()
    return Effect.gen(function*() {
      const { send } = yield* open
      const hello = yield* send("Write-Output \"hello there\"")
      expect(hello).toMatchObject({ waitReason: "prompt", exitCode: 0, output: "hello there" })
      expect((yield* send("sh -c 'exit 7'")).exitCode).toBe(7)
      expect((yield* send("true")).exitCode).toBe(0)
      expect((yield* send("false")).exitCode).toBe(1)
      const missing = yield* send("Get-Item /nonexistent")
      expect(missing).toMatchObject({ waitReason: "prompt", exitCode: 1 })
      expect(missing.output).toContain("Cannot find path '/nonexistent'")
    }).pipe(Effect.provide(service(log)))
  })

  it.scopedLive("reports an unclosed quote as a continuation, and the rest completes it", () => {
    const log = ScriptedPwsh.makeLog()
    return Effect.gen(function*() {
      const { send } = yield* open
      const open_ = yield* send("Write-Output \"abc")
      expect(open_).toMatchObject({ waitReason: "prompt", continuation: true })
      expect(open_.exitCode).toBeUndefined()
      const rest = yield* send("def\"")
      expect(rest).toMatchObject({ waitReason: "prompt", exitCode: 0, output: "abc\ndef" })
    }).pipe(Effect.provide(service(log)))
  })

  it.scopedLive("a user's prompt function cannot break readiness", () => {
    const log = ScriptedPwsh.makeLog()
    return Effect.gen(function*() {
      const { send } = yield* open
      const refused = yield* send("function prompt { 'broken> ' }")
      expect(refused).toMatchObject({ waitReason: "prompt", exitCode: 1 })
      expect(refused.output).toContain("read-only")
      expect(yield* send("Write-Output still")).toMatchObject({ waitReason: "prompt", output: "still" })
    }).pipe(Effect.provide(service(log)))
  })

  it.scopedLive("exit ends the session with its code", () => {
    const log = ScriptedPwsh.makeLog()
    return Effect.gen(function*() {
      const { send } = yield* open
      const exited = yield* send("exit 3")
      expect(exited.waitReason).toBe("session_exit")
      expect(exited.sessionStatus).toEqual({ _tag: "exited", exitCode: 3, signal: null })
    }).pipe(Effect.provide(service(log)))
  })

  it.scopedLive("is reached by a path or the name powershell", () => {
    const log = ScriptedPwsh.makeLog()
    return Effect.gen(function*() {
      const { opened } = yield* open
      expect(opened.shell).toBe("pwsh")
    }).pipe(Effect.provide(service(log, "/opt/microsoft/powershell/7/powershell")))
  })
})
