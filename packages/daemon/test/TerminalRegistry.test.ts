import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as path from "node:path"
import { Credentials, TerminalRegistry } from "../src/index.js"
import { tempDir } from "./support.js"

const registries: ReadonlyArray<
  readonly [string, Effect.Effect<Layer.Layer<TerminalRegistry.TerminalRegistry, any>, never, any>]
> = [
  ["in memory", Effect.succeed(TerminalRegistry.layerMemory)],
  [
    "SQLite in a temp dir",
    Effect.map(tempDir, (dir) => TerminalRegistry.layerSqlite({ filename: path.join(dir, "state", "daemon.db") }))
  ]
]

const opened = (sessionId: string, runId: number, owner = "owner:alice") => ({
  sessionId,
  owner,
  name: sessionId,
  type: "shell",
  pid: 4242,
  runId,
  openedAt: 1_000
})

describe("TerminalRegistry", () => {
  for (const [name, make] of registries) {
    describe(name, () => {
      it.scoped("a run that never stopped is ended as died at its last heartbeat, with its open terminals and tasks", () =>
        Effect.gen(function*() {
          const context = yield* Layer.build(yield* make)
          const registry = Effect.provide(TerminalRegistry.TerminalRegistry, context)
          const r = yield* registry
          const first = yield* r.startRun(100, 1_000)
          expect(first.died).toEqual([])
          yield* r.terminalOpened(opened("s-a", first.runId))
          yield* r.terminalOpened(opened("s-b", first.runId))
          yield* r.terminalEnded("s-b", { at: 1_500, reason: "closed", exitCode: 0 })
          yield* r.taskStarted({
            taskId: "t-1",
            owner: "owner:alice",
            kind: "send",
            label: "make",
            sessionId: "s-a",
            runId: first.runId,
            startedAt: 1_100
          })
          yield* r.heartbeat(first.runId, 2_000)
          const second = yield* r.startRun(200, 9_000)
          expect(second.runId).not.toBe(first.runId)
          expect(second.died).toMatchObject([{ runId: first.runId, pid: 100, ended: "died", endedAt: 2_000 }])
          expect(Option.getOrThrow(yield* r.terminal("s-a"))).toMatchObject({
            endReason: "daemon-died",
            endedAt: 2_000
          })
          expect(Option.getOrThrow(yield* r.terminal("s-b"))).toMatchObject({ endReason: "closed", exitCode: 0 })
          expect(Option.getOrThrow(yield* r.task("t-1"))).toMatchObject({ status: "daemon-died", endedAt: 2_000 })
          expect(Option.isNone(yield* r.terminal("s-never"))).toBe(true)
        }))

      it.scoped("a graceful stop ends the open terminals as daemon-stopped; a later start finds no death", () =>
        Effect.gen(function*() {
          const r = yield* Effect.provide(TerminalRegistry.TerminalRegistry, yield* Layer.build(yield* make))
          const run = yield* r.startRun(1, 10)
          yield* r.terminalOpened(opened("s-x", run.runId, "owner:bob"))
          yield* r.stopRun(run.runId, 50)
          expect(Option.getOrThrow(yield* r.terminal("s-x"))).toMatchObject({
            endReason: "daemon-stopped",
            endedAt: 50
          })
          expect((yield* r.startRun(2, 60)).died).toEqual([])
          expect((yield* r.terminals("owner:bob")).map((t) => t.sessionId)).toEqual(["s-x"])
          expect(yield* r.terminals("owner:alice")).toEqual([])
        }))

      it.scoped("owners: added once with a hash, never twice; the audit of control changes is kept in order", () =>
        Effect.gen(function*() {
          const r = yield* Effect.provide(TerminalRegistry.TerminalRegistry, yield* Layer.build(yield* make))
          const secret = yield* Credentials.hashSecret("a-secret-of-sixteen-bytes")
          expect(yield* r.addOwner({ name: "alice", secret, createdAt: 1, lastSeenAt: 1 })).toBe(true)
          expect(yield* r.addOwner({ name: "alice", secret, createdAt: 2, lastSeenAt: 2 })).toBe(false)
          yield* r.ownerSeen("alice", 5)
          const stored = Option.getOrThrow(yield* r.owner("alice"))
          expect(stored).toMatchObject({ name: "alice", createdAt: 1, lastSeenAt: 5, secret })
          expect(JSON.stringify(stored)).not.toContain("a-secret-of-sixteen-bytes")
          yield* r.audit([{ sessionId: "s-1", at: 2, actor: "person:ann", action: "take" }])
          yield* r.audit([
            { sessionId: "s-1", at: 3, actor: "person:ann", action: "hand-back", detail: "done" },
            { sessionId: "s-2", at: 1, actor: "owner:alice", action: "take" }
          ])
          expect((yield* r.auditOf("s-1")).map((change) => change.action)).toEqual(["take", "hand-back"])
        }))
    })
  }

  it.scoped("SQLite: what one daemon wrote, the next one (a new connection, migrated again) reads", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const filename = path.join(dir, "daemon.db")
      const first = yield* Effect.scoped(
        Effect.gen(function*() {
          const r = yield* TerminalRegistry.TerminalRegistry
          const run = yield* r.startRun(7, 100)
          yield* r.terminalOpened(opened("s-kept", run.runId))
          return run.runId
        }).pipe(Effect.provide(TerminalRegistry.layerSqlite({ filename })))
      )
      const second = yield* Effect.scoped(
        Effect.gen(function*() {
          const r = yield* TerminalRegistry.TerminalRegistry
          const run = yield* r.startRun(8, 200)
          return { run, terminal: yield* r.terminal("s-kept") }
        }).pipe(Effect.provide(TerminalRegistry.layerSqlite({ filename })))
      )
      expect(second.run.died.map((run) => run.runId)).toEqual([first])
      expect(Option.getOrThrow(second.terminal)).toMatchObject({ endReason: "daemon-died", endedAt: 100 })
    }))
})

describe("Credentials", () => {
  it.effect("a secret verifies against its hash, another does not; the hash never holds the secret", () =>
    Effect.gen(function*() {
      const secret = Credentials.issueSecret()
      expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(Credentials.issueSecret()).not.toBe(secret)
      const stored = yield* Credentials.hashSecret(secret)
      expect(stored.scheme).toBe("scrypt:16384:8:1")
      expect(JSON.stringify(stored)).not.toContain(secret)
      expect(yield* Credentials.verifySecret(secret, stored)).toBe(true)
      expect(yield* Credentials.verifySecret(`${secret}x`, stored)).toBe(false)
      expect(yield* Credentials.verifySecret("", stored)).toBe(false)
      const again = yield* Credentials.hashSecret(secret)
      expect(again.salt).not.toBe(stored.salt)
      expect(again.hash).not.toBe(stored.hash)
      expect(yield* Credentials.verifySecret(secret, { ...stored, scheme: "md5" })).toBe(false)
    }))
})
