import { Oversight, Recording } from "@agent-terminal/core"
import { FileRecordings } from "@agent-terminal/node"
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { openShell, TestTerminal } from "../support/terminal.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "at-recordings-"))
const layer = (config: Record<string, unknown> = {}) =>
  TestTerminal(config).pipe(Layer.provide(FileRecordings.layer({ directory: dir })))
const alice = Oversight.personId("alice")
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("the lease, resizes and recordings on a real shell", () => {
  it.scopedLive("terminal_resize reaches the program, every watcher and the recording", () =>
    Effect.gen(function*() {
      const oversight = yield* Oversight.Oversight
      const { id, send, service } = yield* openShell({ record: true })
      const watch = yield* oversight.watch(id)
      expect(yield* service.resize("test-owner" as never, id, { cols: 101, rows: 33 })).toEqual({ cols: 101, rows: 33 })
      expect((yield* send("stty size")).output).toBe("33 101")
      const first = yield* watch.events.pipe(Stream.filter((event) => event._tag === "Resized"), Stream.runHead)
      expect(Option.getOrThrow(first)).toEqual({ _tag: "Resized", cols: 101, rows: 33 })
      expect(yield* Effect.exit(service.resize("test-owner" as never, id, { cols: 5, rows: 5 }))).toMatchObject({
        _tag: "Failure"
      })
      // a person resizes only while holding the control
      expect((yield* Effect.exit(oversight.resize(id, alice, 90, 30)))._tag).toBe("Failure")
      yield* oversight.take(id, alice)
      expect(yield* oversight.resize(id, alice, 90, 30)).toEqual({ cols: 90, rows: 30 })
      yield* oversight.handBack(id, alice)
      expect((yield* send("stty size")).output).toContain("30 90")
      const listed = (yield* oversight.sessions).find((session) => session.sessionId === id)!
      expect([listed.cols, listed.rows]).toEqual([90, 30])
      const name = listed.recording!.name
      yield* service.close("test-owner" as never, id)
      const cast = fs.readFileSync(path.join(dir, name), "utf8")
      expect(cast).toContain(`"r", "101x33"]`)
      expect(cast).toContain(`"r", "90x30"]`)
      expect(cast).toContain("send: stty size → prompt, exit 0")
      expect(fs.statSync(path.join(dir, name)).mode & 0o777).toBe(0o600)
    }).pipe(Effect.provide(layer())))

  it.scopedLive("a recording stops at its size cap and says so; the session goes on", () =>
    Effect.gen(function*() {
      const oversight = yield* Oversight.Oversight
      const { id, send, service } = yield* openShell({ record: true })
      yield* send("seq 1 20000")
      expect((yield* send("echo still-here")).output).toBe("still-here")
      const listed = (yield* oversight.sessions).find((session) => session.sessionId === id)!
      expect(listed.recording?.stopped).toBe(Recording.stoppedAtCap(16384))
      const name = listed.recording!.name
      yield* service.close("test-owner" as never, id)
      const cast = fs.readFileSync(path.join(dir, name), "utf8")
      expect(Buffer.byteLength(cast)).toBeLessThanOrEqual(16384)
      expect(cast.trim().split("\n").pop()).toContain(Recording.stoppedAtCap(16384))
    }).pipe(Effect.provide(layer({ recordingMaxBytes: 16384 }))))

  it.scopedLive("the terminal's echo state is read from the tty: off at read -s, on at the prompt", () =>
    Effect.gen(function*() {
      const oversight = yield* Oversight.Oversight
      const { id, send } = yield* openShell()
      yield* send("read -s -p 'pw: ' PW; echo \"len ${#PW}\"")
      yield* oversight.take(id, alice)
      yield* oversight.input(id, alice, "abc123\r")
      yield* Effect.sleep("300 millis")
      yield* oversight.input(id, alice, "echo visible\r")
      const note = yield* oversight.handBack(id, alice)
      expect(note).toMatchObject({ linesTyped: 2, echoOffBytes: 7 })
      const entries = yield* oversight.audit(id)
      expect(entries.map((entry) => entry.detail)).toEqual(
        expect.arrayContaining(["[human typed 7 bytes with echo off]", "echo visible\\r"])
      )
      expect(JSON.stringify(entries)).not.toContain("abc123")
      const after = yield* send("true")
      expect(after.output).toContain("len 6")
      expect(after.output).not.toContain("abc123")
    }).pipe(Effect.provide(layer())))

  it.scopedLive("echo off is a secret in or out of canonical mode: read -s -n, getpass, a PIN read raw; the shell's own prompt is not", () =>
    Effect.gen(function*() {
      const oversight = yield* Oversight.Oversight
      const { id, send, service } = yield* openShell({ record: true })
      const typedAt = (prompt: string, secret: string) =>
        Effect.gen(function*() {
          const asked = yield* send(prompt)
          expect(asked.waitReason).toBe("stdin_read")
          yield* oversight.take(id, alice)
          // a key at a time, as a browser sends them
          for (const key of secret) yield* oversight.input(id, alice, key)
          yield* Effect.sleep("300 millis")
          return yield* oversight.handBack(id, alice)
        })
      const pin = "40917253"
      const byRead = yield* typedAt("read -s -n 8 PIN; echo \"pin of ${#PIN}\"", pin)
      expect(byRead.echoOffBytes).toBe(8)
      const atRead = yield* send("true")
      expect(atRead.output).toContain("pin of 8")
      const password = "gp-Secret-77"
      const byGetpass = yield* typedAt(
        "python3 -c \"import getpass; print('len', len(getpass.getpass('pw: ')))\"",
        `${password}\r`
      )
      expect(byGetpass.echoOffBytes).toBe(password.length + 1)
      // what sudo -S and PIN pads do: echo and canonical mode off, the bytes read as they come
      const raw = "31415926"
      const byRaw = yield* typedAt(
        "python3 -c \"import sys, termios; a = termios.tcgetattr(0); a[3] &= ~(termios.ECHO | termios.ICANON); " +
          "termios.tcsetattr(0, termios.TCSANOW, a); print('raw', len(sys.stdin.read(8)))\"",
        raw
      )
      expect(byRaw.echoOffBytes).toBe(8)
      // at the shell's prompt the line editor has echo off too, and echoes the line itself: not a secret
      yield* oversight.take(id, alice)
      yield* oversight.input(id, alice, "echo visible-at-prompt\r")
      yield* Effect.sleep("300 millis")
      const atPrompt = yield* oversight.handBack(id, alice)
      expect(atPrompt.echoOffBytes).toBe(0)
      const model = [(yield* send("true")).output, (yield* service.read("test-owner" as never, id, {})).text]
        .join("\n")
      const entries = JSON.stringify(yield* oversight.audit(id))
      const listed = (yield* oversight.sessions).find((session) => session.sessionId === id)!
      yield* service.close("test-owner" as never, id)
      const cast = fs.readFileSync(path.join(dir, listed.recording!.name), "utf8")
      for (const secret of [pin, password, raw]) {
        expect(entries).not.toContain(secret)
        expect(cast).not.toContain(secret)
        expect(model).not.toContain(secret)
      }
      expect(entries).toContain("echo visible-at-prompt")
      expect(entries).toContain("[human typed 8 bytes with echo off]")
    }).pipe(Effect.provide(layer({ recordInput: true }))))
})
