import { Exec } from "@agent-terminal/core"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { alive, otherOwner, owner, TestTerminal } from "../support/terminal.js"
import { failureOf, run, script, sleepers, uniqueSleep } from "./support.js"

const modes = ["child", "pty"] as const

/** Poll with wait until `until` holds (each poll blocks until there is news, so this is no busy loop). */
const pollUntil = (taskId: string, until: (view: Exec.ExecResult, seen: string) => boolean) =>
  Effect.gen(function*() {
    const exec = yield* Exec.Exec
    let seen = ""
    for (let attempt = 0; attempt < 40; attempt++) {
      const view = yield* exec.poll(owner, taskId, { wait: true, timeoutMs: 500 })
      seen += view.output
      if (until(view, seen)) return { view, seen }
    }
    return yield* Effect.dieMessage(`task ${taskId} never reached the expected state; output so far: ${seen}`)
  })

layer(TestTerminal(), { excludeTestServices: true })("exec follow-ups (process)", (it) => {
  for (const mode of modes) {
    it.scoped(`${mode}: the yield window returns a task id and the output so far; poll with wait gets the rest`, () =>
      Effect.gen(function*() {
        const exec = yield* Exec.Exec
        const first = yield* run({ spawn: script(mode, "echo start; sleep 3; echo end"), yieldMs: 500 })
        expect(first.status).toBe("running")
        expect(first.taskId).toMatch(/^t-/)
        expect(first.output.trim()).toBe("start")
        // returns well before the command ends
        expect(first.elapsedMs).toBeLessThan(3000)
        const rest = yield* exec.poll(owner, first.taskId!, { wait: true, timeoutMs: 20_000 })
        expect(rest).toMatchObject({ status: "exited", reason: "exited", exitCode: 0, taskId: first.taskId })
        expect(rest.output.trim()).toBe("end")
        const after = yield* exec.poll(owner, first.taskId!)
        expect(after.output).toBe("")
        expect(after.status).toBe("exited")
      }))
  }

  it.scoped("child: background cat takes write and submit, eof ends it", () =>
    Effect.gen(function*() {
      const exec = yield* Exec.Exec
      const started = yield* run({ spawn: { _tag: "child", argv: ["cat"] }, background: true })
      expect(started).toMatchObject({ status: "running", output: "" })
      const taskId = started.taskId!
      expect(yield* exec.write(owner, taskId, { text: "hel" })).toMatchObject({ bytes: 3, eof: false })
      expect(yield* exec.write(owner, taskId, { text: "lo", submit: true })).toMatchObject({ bytes: 3 })
      const echoed = yield* pollUntil(taskId, (_, seen) => seen.includes("hello\n"))
      expect(echoed.seen).toBe("hello\n")
      yield* exec.write(owner, taskId, { text: "bye", submit: true, eof: true })
      const done = yield* pollUntil(taskId, (view) => view.status !== "running")
      expect(done.view).toMatchObject({ status: "exited", reason: "exited", exitCode: 0 })
      expect(done.seen).toContain("bye")
      const keys = yield* Effect.exit(exec.write(owner, taskId, { keys: ["C-c"] }))
      expect(failureOf(keys)).toMatchObject({ _tag: "InvalidInput" })
    }))

  it.scoped("child: keys are refused on pipes while the run goes on", () =>
    Effect.gen(function*() {
      const exec = yield* Exec.Exec
      const started = yield* run({ spawn: { _tag: "child", argv: ["cat"] }, background: true })
      const keys = yield* Effect.exit(exec.write(owner, started.taskId!, { keys: ["Up"] }))
      expect(failureOf(keys)).toMatchObject({ _tag: "InvalidInput", field: "keys" })
      yield* exec.write(owner, started.taskId!, { eof: true })
      const done = yield* pollUntil(started.taskId!, (view) => view.status !== "running")
      expect(done.view).toMatchObject({ status: "exited", exitCode: 0 })
    }))

  it.scoped("pty: a background read reports waiting_input; submit answers it", () =>
    Effect.gen(function*() {
      const exec = yield* Exec.Exec
      const started = yield* run({
        spawn: { _tag: "pty", command: "read -p 'name? ' x; echo \"got $x\"" },
        background: true
      })
      const waiting = yield* pollUntil(started.taskId!, (view) => view.status === "waiting_input")
      expect(waiting.seen).toContain("name? ")
      yield* exec.write(owner, started.taskId!, { text: "hello", submit: true })
      const done = yield* pollUntil(started.taskId!, (view) => view.status === "exited")
      expect(done.view).toMatchObject({ reason: "exited", exitCode: 0 })
      expect(done.seen).toContain("got hello")
    }))

  it.scoped("pty: a foreground run that waits for input returns at once with its task id", () =>
    Effect.gen(function*() {
      const exec = yield* Exec.Exec
      const first = yield* run({ spawn: { _tag: "pty", command: "read -p 'continue? ' x; echo \"answer $x\"" } })
      expect(first.status).toBe("waiting_input")
      expect(first.output).toContain("continue? ")
      // far below the 30 s yield window
      expect(first.elapsedMs).toBeLessThan(10_000)
      yield* exec.write(owner, first.taskId!, { keys: ["y", "Enter"] })
      const done = yield* pollUntil(first.taskId!, (view) => view.status === "exited")
      expect(done.seen).toContain("answer y")
    }))

  it.scoped("log pages through the full output; a cut foreground result keeps its task id for it", () =>
    Effect.gen(function*() {
      const exec = yield* Exec.Exec
      const big = yield* run({ spawn: { _tag: "child", argv: ["seq", "1", "200000"] } })
      expect(big).toMatchObject({ status: "exited", exitCode: 0, truncated: true })
      expect(big.taskId).toMatch(/^t-/)
      expect(big.output).toMatch(/^1\n2\n3\n/)
      expect(big.output).toMatch(/omitted \d+ lines/)
      expect(big.output.trimEnd().endsWith("199999\n200000")).toBe(true)
      // the log keeps the newest lines (scrollbackLines, 10000 by default), numbered from the run's first line
      const newest = yield* exec.log(owner, big.taskId!, { count: 3 })
      expect(newest).toMatchObject({ text: "199998\n199999\n200000", totalLines: 10_000, lineEnd: 200_000 })
      const older = yield* exec.log(owner, big.taskId!, { offset: 5000, count: 2 })
      expect(older).toMatchObject({ text: "194999\n195000", lineBegin: 194_998, lineEnd: 195_000 })
      const bad = yield* Effect.exit(exec.log(owner, big.taskId!, { offset: -1 }))
      expect(failureOf(bad)).toMatchObject({ _tag: "InvalidInput", field: "offset" })
      const small = yield* run({ spawn: { _tag: "pty", command: "seq 1 5" }, background: true })
      yield* pollUntil(small.taskId!, (view) => view.status === "exited")
      expect((yield* exec.log(owner, small.taskId!, {})).text).toBe("1\n2\n3\n4\n5")
    }))

  for (const mode of modes) {
    it.scoped(`${mode}: kill ends the whole tree; kill again and remove are idempotent`, () =>
      Effect.gen(function*() {
        const exec = yield* Exec.Exec
        const seconds = uniqueSleep()
        const started = yield* run({
          spawn: script(mode, `sleep ${seconds} & echo "pid $!"; sleep ${seconds} & echo "pid $!"; wait`),
          background: true
        })
        const taskId = started.taskId!
        const both = yield* pollUntil(taskId, (_, seen) => (seen.match(/pid \d+/g) ?? []).length === 2)
        const pids = [...both.seen.matchAll(/pid (\d+)/g)].map((match) => Number(match[1]))
        expect(pids.every(alive)).toBe(true)
        const killed = yield* exec.kill(owner, taskId)
        expect(killed).toMatchObject({ status: "killed", reason: "killed", taskId })
        expect(pids.some(alive)).toBe(false)
        expect(sleepers(seconds)).toEqual([])
        const again = yield* exec.kill(owner, taskId)
        expect(again).toMatchObject({ status: "killed", reason: "killed", output: "" })
        const listed = yield* exec.list(owner)
        expect(listed.find((task) => task.taskId === taskId)).toMatchObject({
          kind: "exec",
          mode,
          status: "killed",
          reason: "killed"
        })
        expect(yield* exec.remove(owner, taskId)).toEqual({ taskId, outcome: "removed" })
        expect(yield* exec.remove(owner, taskId)).toEqual({ taskId, outcome: "already-removed" })
        expect((yield* exec.list(owner)).some((task) => task.taskId === taskId)).toBe(false)
        const gone = yield* Effect.exit(exec.poll(owner, taskId))
        expect(failureOf(gone)).toMatchObject({ _tag: "TaskNotFound", taskId })
      }))
  }

  it.scoped("remove of a running run kills its tree first", () =>
    Effect.gen(function*() {
      const exec = yield* Exec.Exec
      const seconds = uniqueSleep()
      const started = yield* run({ spawn: { _tag: "child", argv: ["sleep", seconds] }, background: true })
      yield* Effect.sleep(200)
      expect(sleepers(seconds)).toHaveLength(1)
      expect(yield* exec.remove(owner, started.taskId!)).toMatchObject({ outcome: "removed" })
      expect(sleepers(seconds)).toEqual([])
    }))

  for (const mode of modes) {
    it.scoped(`${mode}: what a command leaves running in the background is ended when it exits`, () =>
      Effect.gen(function*() {
        const seconds = uniqueSleep()
        const result = yield* run({ spawn: script(mode, `sleep ${seconds} & echo left`) })
        expect(result).toMatchObject({ status: "exited", reason: "exited", exitCode: 0 })
        expect(result.output.trim()).toBe("left")
        expect(sleepers(seconds)).toEqual([])
      }))

    it.scoped(`${mode}: a caller that gives up on a foreground run (cancel) kills its tree`, () =>
      Effect.gen(function*() {
        const exec = yield* Exec.Exec
        const seconds = uniqueSleep()
        const cancelled = yield* exec.exec(owner, { spawn: script(mode, `sleep ${seconds}; echo never`) }).pipe(
          Effect.timeout(700),
          Effect.exit
        )
        expect(cancelled._tag).toBe("Failure")
        expect(sleepers(seconds)).toEqual([])
        expect((yield* exec.list(owner)).filter((task) => task.kind === "exec" && task.status === "running")).toEqual(
          []
        )
      }))
  }

  it.scoped("tasks belong to their owner: another owner gets TaskNotFound for every follow-up", () =>
    Effect.gen(function*() {
      const exec = yield* Exec.Exec
      const started = yield* run({ spawn: { _tag: "child", argv: ["cat"] }, background: true })
      const taskId = started.taskId!
      const attempts = [
        exec.poll(otherOwner, taskId),
        exec.log(otherOwner, taskId, {}),
        exec.write(otherOwner, taskId, { text: "x" }),
        exec.kill(otherOwner, taskId),
        exec.remove(otherOwner, taskId)
      ] as const
      for (const attempt of attempts) {
        expect(failureOf(yield* Effect.exit(attempt as Effect.Effect<unknown, unknown>))).toMatchObject({
          _tag: "TaskNotFound",
          taskId
        })
      }
      expect((yield* exec.list(otherOwner)).some((task) => task.taskId === taskId)).toBe(false)
      expect((yield* exec.poll(owner, taskId)).status).toBe("running")
    }))

  it.scoped("a missing program or working directory fails the call, nothing runs", () =>
    Effect.gen(function*() {
      const exec = yield* Exec.Exec
      const missing = yield* Effect.exit(exec.exec(owner, { spawn: { _tag: "child", argv: ["no-such-program-xyz"] } }))
      expect(failureOf(missing)).toMatchObject({ _tag: "SpawnFailed", command: "no-such-program-xyz" })
      const cwd = yield* Effect.exit(
        exec.exec(owner, { spawn: { _tag: "child", argv: ["true"] }, cwd: "/no/such/dir" })
      )
      expect(failureOf(cwd)).toMatchObject({ _tag: "InvalidInput", field: "cwd" })
      const ptyCwd = yield* Effect.exit(
        exec.exec(owner, { spawn: { _tag: "pty", command: "true" }, cwd: "/no/such/dir" })
      )
      expect(failureOf(ptyCwd)).toMatchObject({ _tag: "InvalidInput", field: "cwd" })
    }))

  it.scoped("argv is passed as it is: no shell, no word splitting", () =>
    Effect.gen(function*() {
      const result = yield* run({ spawn: { _tag: "child", argv: ["printf", "%s|", "a b", "$HOME", "*", "'q'"] } })
      expect(result).toMatchObject({ exitCode: 0, output: "a b|$HOME|*|'q'|" })
    }))
})
