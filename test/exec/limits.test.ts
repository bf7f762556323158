import { NodeTerminal } from "@agent-terminal/node"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { testConfig, TestTerminal } from "../support/terminal.js"
import { run, script, sleepers, uniqueSleep } from "./support.js"

const modes = ["child", "pty"] as const

layer(TestTerminal(), { excludeTestServices: true })("exec limits (one-shot runs)", (it) => {
  for (const mode of modes) {
    it.scoped(`${mode}: a 1 s timeout kills the whole tree, returns soon with the partial output`, () =>
      Effect.gen(function*() {
        const seconds = uniqueSleep()
        const started = Date.now()
        const result = yield* run({
          spawn: script(mode, `echo begin; sleep ${seconds} & echo "pid $!"; sleep ${seconds} & echo "pid $!"; wait`),
          timeoutMs: 1000
        })
        const elapsed = Date.now() - started
        expect(result).toMatchObject({ status: "killed", reason: "timeout", mode })
        expect(result.exitCode).toBeUndefined()
        expect(result.taskId).toBeUndefined()
        expect(result.output).toContain("begin")
        const pids = [...result.output.matchAll(/pid (\d+)/g)].map((match) => Number(match[1]))
        expect(pids).toHaveLength(2)
        // returns well before the command would have ended (100 s)
        expect(elapsed).toBeLessThan(10_000)
        expect(sleepers(seconds)).toEqual([])
      }))

    it.scoped(`${mode}: the no-output watchdog ends a silent command and keeps its 10 lines`, () =>
      Effect.gen(function*() {
        const result = yield* run({
          spawn: script(mode, "for i in $(seq 1 10); do echo \"line $i\"; done; sleep 5; echo never"),
          noOutputTimeoutMs: 1000
        })
        expect(result).toMatchObject({ status: "killed", reason: "no_output", mode })
        const lines = result.output.split("\n").filter((line) => line !== "")
        expect(lines).toEqual(Array.from({ length: 10 }, (_, i) => `line ${i + 1}`))
        expect(result.elapsedMs).toBeLessThan(5000)
      }))

    it.scoped(`${mode}: a command that ends by itself reports its exit code`, () =>
      Effect.gen(function*() {
        const ok = yield* run({ spawn: script(mode, "echo hello; echo oops >&2") })
        expect(ok).toMatchObject({ status: "exited", reason: "exited", exitCode: 0, truncated: false })
        // stdout and stderr are two pipes: both arrive, their order across pipes is the kernel's
        expect(ok.output.trimEnd().split(/\r?\n/).sort()).toEqual(["hello", "oops"])
        const failed = yield* run({ spawn: script(mode, "exit 7") })
        expect(failed).toMatchObject({ status: "exited", reason: "exited", exitCode: 7 })
      }))
  }
})

// Without a cgroup (hosts where cgroup v2 is not writable) the identity-fenced sweep ends the tree.
layer(NodeTerminal.layer(testConfig, { containment: "sweep" }), { excludeTestServices: true })(
  "exec limits with the sweep (no cgroup)",
  (it) => {
    for (const mode of modes) {
      it.scoped(`${mode}: a timeout kills the whole tree`, () =>
        Effect.gen(function*() {
          const seconds = uniqueSleep()
          const result = yield* run({
            spawn: script(mode, `sleep ${seconds} & echo "pid $!"; sleep ${seconds} & echo "pid $!"; wait`),
            timeoutMs: 1000
          })
          expect(result).toMatchObject({ status: "killed", reason: "timeout" })
          expect([...result.output.matchAll(/pid (\d+)/g)]).toHaveLength(2)
          expect(sleepers(seconds)).toEqual([])
        }))
    }
  }
)
