/**
 * Exact readiness for servers (issue 30): `waitFor: {listening: PORT | true}` settles as `matched` the moment a
 * process of the session listens, read from `/proc` — no banner, no regex — in a foreground send, in a
 * background one, and with the port; a server that listened before the send does not count. And a send
 * that ends by `timeout` or `inferred_idle` says what the foreground program is doing.
 */
import { Exec, Ids, PtyService, TaskRuntime } from "@agent-terminal/core"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as net from "node:net"
import { openShell, owner, TestTerminal } from "../support/terminal.js"

/** A free TCP port on loopback (closed again before it is used). */
const freePort = Effect.promise(() =>
  new Promise<number>((resolve) => {
    const server = net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })
)

layer(TestTerminal(), { excludeTestServices: true })("listening, and what a silent program is doing", (it) => {
  it.scoped("python3 -m http.server 0 with waitFor {listening: true}: matched, naming the process and its port", () =>
    Effect.gen(function*() {
      const { send } = yield* openShell()
      // -u: the banner is not the signal here; the socket is
      const result = yield* send("python3 -u -m http.server 0 --bind 127.0.0.1", {
        waitFor: { listening: true },
        timeoutMs: 15_000
      })
      expect(result.waitReason).toBe("matched")
      const listener = result.match?.listening
      expect(listener).toMatchObject({ name: "python3", protocol: "tcp", address: "127.0.0.1" })
      expect(listener!.port).toBeGreaterThan(0)
      // the port it names is the one the server answers on
      const answered = yield* Effect.promise(() =>
        fetch(`http://127.0.0.1:${listener!.port}/`).then((response) => response.status)
      )
      expect(answered).toBe(200)
    }))

  it.scoped("a port: matched once that port listens; a server listening before the send does not count", () =>
    Effect.gen(function*() {
      const { send, service, id } = yield* openShell()
      const first = yield* freePort
      yield* send(`python3 -m http.server ${first} --bind 127.0.0.1 >/dev/null 2>&1 &`)
      // a server of the session that comes up during the send counts, started in the background or not
      const up = yield* send("sleep 10", { waitFor: { listening: first }, timeoutMs: 15_000 })
      expect(up.waitReason).toBe("matched")
      expect(up.match?.listening).toMatchObject({ name: "python3", port: first })
      yield* service.signal(owner, id, "SIGINT")
      yield* send("true")
      const second = yield* freePort
      const again = yield* service.send(owner, id, {
        text: `sleep 1; exec python3 -m http.server ${second} --bind 127.0.0.1`,
        waitFor: { listening: true },
        timeoutMs: 15_000
      })
      expect(again.waitReason).toBe("matched")
      expect(again.match?.listening?.port).toBe(second)
    }))

  it.scoped("in a background send: the first return is matched with the listener, the task runs on", () =>
    Effect.gen(function*() {
      const { id, service } = yield* openShell()
      const tasks = yield* TaskRuntime.TaskRuntime
      const port = yield* freePort
      const started = yield* service.send(owner, id, {
        text: `python3 -m http.server ${port} --bind 127.0.0.1`,
        background: true,
        waitFor: { listening: port },
        timeoutMs: 15_000
      })
      expect(started.waitReason).toBe("matched")
      expect(started.match?.listening).toMatchObject({ name: "python3", port })
      const view = yield* tasks.output(owner, started.taskId!, {})
      expect(view.status).toBe("running")
      yield* tasks.kill(owner, started.taskId!)
    }))

  it.scoped("exec in the background with waitFor {listening}: matched with the run's listener", () =>
    Effect.gen(function*() {
      const exec = yield* Exec.Exec
      const port = yield* freePort
      const result = yield* exec.exec(owner, {
        spawn: { _tag: "pty", command: `python3 -m http.server ${port} --bind 127.0.0.1` },
        background: true,
        waitFor: { listening: port },
        yieldMs: 15_000
      })
      expect(result.match?.listening).toMatchObject({ name: "python3", port })
      expect(result.status).toBe("running")
      yield* exec.kill(owner, result.taskId!)
    }))

  it.scoped("sleep 100 that times out says it is sleeping, naming sleep; a read of a pipe says so too", () =>
    Effect.gen(function*() {
      const { send, service, id } = yield* openShell()
      const slept = yield* send("sleep 100", { timeoutMs: 1000 })
      expect(slept.waitReason).toBe("timeout")
      expect(slept.foreground).toMatchObject({ name: "sleep", state: "sleeping" })
      yield* service.signal(owner, id, "SIGINT")
      yield* send("true")
      const piped = yield* send("sleep 100 | cat", { timeoutMs: 1000 })
      expect(piped.waitReason).toBe("timeout")
      // of the group, the newest member doing something: cat, blocked reading the pipe sleep holds open
      expect(piped.foreground).toMatchObject({ name: "cat", state: "reading_pipe" })
      yield* service.signal(owner, id, "SIGINT")
      const script = yield* send("bash -c 'sleep 100; echo never'", { timeoutMs: 1000 })
      // the script waits for its child: the child is named
      expect(script.foreground).toMatchObject({ name: "sleep", state: "sleeping" })
      yield* service.signal(owner, id, "SIGINT")
      const done = yield* send("echo done")
      expect(done.foreground).toBeUndefined()
    }))
})

layer(TestTerminal({ idleWhileRunning: true, idleSilenceMs: 800 }), { excludeTestServices: true })(
  "inferred_idle",
  (it) => {
    it.scoped("a silent busy loop that goes idle by silence says it is running", () =>
      Effect.gen(function*() {
        const { send } = yield* openShell()
        const spun = yield* send("python3 -c 'while True: pass'", { timeoutMs: 10_000 })
        expect(spun.waitReason).toBe("inferred_idle")
        expect(spun.foreground).toMatchObject({ name: "python3", state: "running" })
        const service = yield* PtyService.PtyService
        const sessions = yield* service.list(owner)
        yield* service.signal(owner, Ids.SessionId.make(sessions[0]!.sessionId), "SIGINT")
      }))
  }
)
