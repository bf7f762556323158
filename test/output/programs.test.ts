import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { openShell, tempDir, TestTerminal } from "../support/terminal.js"

const fullScreenNote = "[a full-screen program holds the terminal: see screen]"

const scratch = tempDir("at-output-")

/** A temporary git repository with `count` commits ("commit number N"), made in one `git fast-import`. */
const repository = (count: number) => Effect.map(scratch, (dir) => commits(dir, count))

const commits = (dir: string, count: number): string => {
  execFileSync("git", ["init", "-q", "-b", "main", dir])
  let stream = ""
  for (let i = 1; i <= count; i++) {
    const message = `commit number ${i}\n`
    stream += `commit refs/heads/main\ncommitter Test <test@example.com> ${1_700_000_000 + i} +0000\n`
    stream += `data ${Buffer.byteLength(message)}\n${message}\n`
  }
  execFileSync("git", ["-C", dir, "fast-import", "--quiet"], { input: stream })
  execFileSync("git", ["-C", dir, "checkout", "-q", "main"])
  return dir
}

layer(TestTerminal(), { excludeTestServices: true })("full-screen programs", (it) => {
  it.scoped("git log in its pager (less as git starts it) shows the pager's screen; q returns to the prompt", () =>
    Effect.gen(function*() {
      const dir = yield* repository(150)
      const { keys, send } = yield* openShell({ cwd: dir })
      const paged = yield* send("GIT_PAGER=less git log --oneline")
      expect(paged.waitReason).toBe("stdin_read")
      expect(paged.output).toBe(fullScreenNote)
      const rows = paged.screen!.rows
      expect(rows[0]).toMatch(/^[0-9a-f]{7} \(HEAD -> main\) commit number 150$/)
      expect(rows).toContainEqual(expect.stringMatching(/ commit number 120$/))
      expect(rows.at(-1)).toBe(":")
      expect(paged.screen!.cursor).toEqual({ row: rows.length - 1, col: 1 })
      const quit = yield* keys(["q"])
      expect(quit.waitReason).toBe("prompt")
      expect(quit.exitCode).toBe(0)
      expect(quit.screen).toBeUndefined()
      const after = yield* send("echo back at the prompt")
      expect(after.output).toBe("back at the prompt")
    }))

  it.scoped("a pager on the alternate screen (LESS=R) is reported with its screen too", () =>
    Effect.gen(function*() {
      const dir = yield* repository(150)
      const { keys, send } = yield* openShell({ cwd: dir })
      const paged = yield* send("GIT_PAGER=less LESS=R git log --oneline")
      expect(paged.waitReason).toBe("stdin_read")
      expect(paged.output).toBe(fullScreenNote)
      expect(paged.screen!.rows[0]).toMatch(/commit number 150$/)
      const down = yield* keys(["PageDown"])
      expect(down.screen!.rows[0]).not.toMatch(/commit number 150$/)
      const quit = yield* keys(["q"])
      expect(quit.waitReason).toBe("prompt")
      expect(quit.screen).toBeUndefined()
      expect((yield* send("echo back")).output).toBe("back")
    }))

  it.scoped("vim opens with its screen visible; arrows follow its cursor mode; Escape :q! Enter returns (32)", () =>
    Effect.gen(function*() {
      const dir = yield* scratch
      fs.writeFileSync(path.join(dir, "notes.txt"), "first line\nsecond line\nthird line\n")
      const { keys, send } = yield* openShell({ cwd: dir })
      const opened = yield* send("vim -u NONE -N notes.txt")
      expect(opened.waitReason).toBe("stdin_read")
      expect(opened.output).toBe(fullScreenNote)
      const rows = opened.screen!.rows
      expect(rows.slice(0, 4)).toEqual(["first line", "second line", "third line", "~"])
      expect(rows.at(-1)).toMatch(/^"notes\.txt" 3L, 34B/)
      expect(opened.screen!.cursor).toEqual({ row: 0, col: 0 })
      // vim set application cursor keys: Down must arrive as ESC O B to move the cursor
      const moved = yield* keys(["Down", "Down", "End"])
      expect(moved.screen!.cursor).toEqual({ row: 2, col: 9 })
      const edited = yield* keys(["x"])
      expect(edited.screen!.rows[2]).toBe("third lin")
      yield* keys(["Escape"])
      const quit = yield* send(":q!")
      expect(quit.waitReason).toBe("prompt")
      expect(quit.exitCode).toBe(0)
      expect(quit.screen).toBeUndefined()
      expect(fs.readFileSync(path.join(dir, "notes.txt"), "utf8")).toBe("first line\nsecond line\nthird line\n")
      expect((yield* send("echo back")).output).toBe("back")
    }))
})

layer(TestTerminal(), { excludeTestServices: true })("what the model reads", (it) => {
  it.scoped("a printf progress bar reads as its final state (30)", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell()
      expect((yield* send("printf '10%%\\r20%%\\r100%%\\n'")).output).toBe("100%")
      const bar = yield* send(
        "for p in 10 40 70 100; do printf '\\r[%-10s] %3d%%' \"$(head -c $((p / 10)) /dev/zero | tr '\\0' '#')\" $p; " +
          "sleep 0.05; done; echo"
      )
      expect(bar.output).toBe("[##########] 100%")
      expect(bar.exitCode).toBe(0)
    }))

  it.scoped("a single 3000-byte command line runs, and its echo is not in the output", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell()
      const payload = Array.from({ length: 2980 }, (_, i) => "abcdefghij"[i % 10]).join("")
      const line = `printf %s '${payload}' | wc -c`
      expect(Buffer.byteLength(line)).toBe(3000)
      const result = yield* send(line)
      expect(result.waitReason).toBe("prompt")
      expect(result.exitCode).toBe(0)
      expect(result.output).toBe("2980")
    }))

  it.scoped("text is sent as its exact UTF-8: bytes >= 0x80 arrive unchanged (32)", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell()
      const waiting = yield* send("head -c 10 | od -An -tx1")
      expect(waiting.waitReason).toBe("stdin_read")
      const result = yield* send("é日😀")
      expect(result.output.trim()).toBe("c3 a9 e6 97 a5 f0 9f 98 80 0a")
    }))

  it.scoped("named keys and modifiers edit the shell's line (32)", () =>
    Effect.gen(function*() {
      const { keys, send } = yield* openShell()
      yield* send("echo one two three", { submit: false })
      yield* keys(["C-w"])
      yield* keys(["M-b", "M-d"])
      const ran = yield* keys(["Enter"])
      expect(ran.output).toBe("one")
      const again = yield* keys(["Up", "Enter"])
      expect(again.output).toBe("one")
      yield* send("echo discarded", { submit: false })
      const cancelled = yield* keys(["C-c"])
      expect(cancelled.waitReason).toBe("prompt")
      expect(cancelled.exitCode).toBe(130)
      expect((yield* send("echo still here")).output).toBe("still here")
    }))

  it.scoped("the prompt is dropped for the shell, kept where it tells state (>>> , Password:)", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell()
      expect((yield* send("echo hi")).output).toBe("hi")
      const python = yield* send("python3 -q")
      expect(python.output).toBe(">>> ")
      expect((yield* send("print(6 * 7)")).output).toBe("42\n>>> ")
      const password = yield* send("import getpass; getpass.getpass()")
      expect(password.output).toBe("Password: ")
      expect((yield* send("secret")).output).toBe("'secret'\n>>> ")
      expect((yield* send("exit()")).waitReason).toBe("prompt")
    }))
})

describe("multi-line input in a shell (33)", () => {
  layer(TestTerminal(), { excludeTestServices: true })("a shell", (it) => {
    it.scoped("multi-line text runs as one unit: one result, no intermediate prompts", () =>
      Effect.gen(function*() {
        const { send } = yield* openShell()
        const two = yield* send("echo one\necho two")
        expect(two.output).toBe("one\ntwo")
        expect(two.exitCode).toBe(0)
        const loop = yield* send("for i in 1 2 3\ndo\n  echo n$i\ndone")
        expect(loop.output).toBe("n1\nn2\nn3")
        const heredoc = yield* send("cat <<'EOF'\nline a\n  line b\nEOF")
        expect(heredoc.output).toBe("line a\n  line b")
        const status = yield* send("true\nfalse")
        expect(status.exitCode).toBe(1)
        const trailing = yield* send("echo trailing\n")
        expect(trailing.output).toBe("trailing")
        yield* send("echo typed one\necho typed two", { submit: false })
        const submitted = yield* send("")
        expect(submitted.output).toBe("typed one\ntyped two")
      }))

    it.scoped("an unfinished multi-line command is reported and discarded, never left behind", () =>
      Effect.gen(function*() {
        const { send } = yield* openShell()
        const quote = yield* send("echo 'oops\necho more")
        expect(quote.continuation).toBe(true)
        expect(quote.waitReason).toBe("prompt")
        expect(quote.exitCode).toBeUndefined()
        expect(quote.output).toMatch(/^\[nothing ran: .*discarded with Ctrl-C\]$/)
        expect((yield* send("echo fine")).output).toBe("fine")
        const heredoc = yield* send("cat <<EOF\nno end line")
        expect(heredoc.continuation).toBe(true)
        expect((yield* send("echo next")).output).toBe("next")
      }))

    it.scoped("a single line that opens a block is reported, so a loop can be typed line by line", () =>
      Effect.gen(function*() {
        const { send } = yield* openShell()
        const opened = yield* send("for i in 1 2; do")
        expect(opened.continuation).toBe(true)
        expect(opened.output).toMatch(/^\[the shell waits for the rest of this command .*C-c.*\]$/)
        expect((yield* send("echo $i")).continuation).toBe(true)
        const done = yield* send("done")
        expect(done.continuation).toBeUndefined()
        expect(done.output).toBe("1\n2")
        const quote = yield* send("echo 'abc")
        expect(quote.continuation).toBe(true)
        expect((yield* send("def'")).output).toBe("abc\ndef")
      }))

    it.scoped("paste is bracketed when the program enabled it: the shell gets it as one line", () =>
      Effect.gen(function*() {
        const { keys, service, id } = yield* openShell()
        const { owner } = yield* Effect.promise(() => import("../support/terminal.js"))
        const pasted = yield* service.send(owner, id, { paste: "echo pasted one\necho pasted two" })
        expect(pasted.output).not.toContain("pasted one\npasted two")
        const ran = yield* keys(["Enter"])
        expect(ran.output).toBe("pasted one\npasted two")
      }))
  })
})

layer(TestTerminal({ maxResultBytes: 64 }), { excludeTestServices: true })("the smallest result cap", (it) => {
  it.scoped("an output cut to 64 bytes keeps code points whole, its tail and the facts (26)", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell()
      const result = yield* send("for i in $(seq 1 50); do echo \"一二三 $i 😀\"; done")
      expect(result.waitReason).toBe("prompt")
      expect(result.exitCode).toBe(0)
      expect(result.truncated).toBe(true)
      expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(64)
      expect(result.output).not.toContain("\uFFFD")
      expect(result.output.endsWith("一二三 50 😀")).toBe(true)
    }))
})

layer(
  TestTerminal({ scrollbackLines: 2000, scrollbackMaxBytes: 64 * 1024, maxReadBytes: 8 * 1024, maxResultBytes: 8192 }),
  { excludeTestServices: true }
)("large output", (it) => {
  it.scoped(
    "seq 1 300000 returns head, tail and the omitted count; the scrollback stays within its bounds",
    () =>
      Effect.gen(function*() {
        const { id, send, service } = yield* openShell()
        const { owner } = yield* Effect.promise(() => import("../support/terminal.js"))
        const result = yield* send("seq 1 300000", { timeoutMs: 60_000 })
        expect(result.waitReason).toBe("prompt")
        expect(result.exitCode).toBe(0)
        expect(result.truncated).toBe(true)
        expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(8192)
        const lines = result.output.split("\n")
        const marker = lines.map((line) => /^… \[omitted (\d+) lines, (\d+) bytes\] …$/.exec(line))
        const at = marker.findIndex((match) => match !== null)
        expect(at).toBeGreaterThan(0)
        expect(marker.filter((match) => match !== null)).toHaveLength(1)
        const head = lines.slice(0, at)
        const tail = lines.slice(at + 1)
        expect(head.slice(0, 3)).toEqual(["1", "2", "3"])
        expect(tail.at(-1)).toBe("300000")
        const omitted = Number(marker[at]![1])
        expect(head.length + omitted + tail.length).toBe(300000)
        expect(Number(tail[0]) - Number(head.at(-1)) - 1).toBe(omitted)

        const newest = yield* service.read(owner, id, {})
        expect(newest.truncated).toBe(true)
        expect(Buffer.byteLength(newest.text)).toBeLessThanOrEqual(8 * 1024)
        expect(newest.totalLines).toBeLessThanOrEqual(2000 + 40)
        expect(newest.text.split("\n").slice(-2)).toEqual(["300000", "$ "])
        const pages: Array<string> = []
        for (let offset = 0; pages.length < 100;) {
          const read = yield* service.read(owner, id, { offset })
          if (read.text === "") break
          pages.unshift(read.text)
          offset = newest.lineEnd - read.lineBegin
        }
        const transcript = pages.join("\n")
        expect(Buffer.byteLength(transcript)).toBeLessThanOrEqual(64 * 1024 + 40 * 161)
        const numbers = transcript.split("\n").filter((line) => /^\d+$/.test(line)).map(Number)
        expect(numbers.at(-1)).toBe(300000)
        expect(numbers.every((n, i) => i === 0 || n === numbers[i - 1]! + 1)).toBe(true)
      }),
    { timeout: 120_000 }
  )
})

layer(TestTerminal(), { excludeTestServices: true })("output xterm cannot take", (it) => {
  it.scoped("a program that erases above from the bottom row past the last column (xterm 6.0.0 throws there) leaves the session working", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell({ cols: 30, rows: 8 })
      const erased = yield* send(`printf '\\033[8;1H%030d\\033[1Jafter the erase\\n'`)
      expect(erased.waitReason).toBe("prompt")
      expect(erased.output).toContain("after the erase")
      const next = yield* send("echo still here")
      expect(next.waitReason).toBe("prompt")
      expect(next.output).toBe("still here")
    }))
})
