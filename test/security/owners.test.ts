/**
 * Owners cannot reach each other's sessions (SCENARIO 36), inside the sandbox too; and an owner's sandbox
 * policy cannot change while it has open or opening sessions.
 */
import { Errors, Ids, PtyService, Sandbox } from "@agent-terminal/core"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { otherOwner, owner } from "../support/terminal.js"
import { failureOf, makeWorkspace, openAs, SandboxedTerminal } from "./support.js"

const workspace = makeWorkspace("owners")
const switcher = Ids.OwnerId.make("switching-owner")

layer(SandboxedTerminal({ mode: "workspace-write", workspace }), { excludeTestServices: true })(
  "owner isolation in the sandbox",
  (it) => {
    it.scoped("another owner's session is invisible and unreachable; names are per owner (36)", () =>
      Effect.gen(function*() {
        const { id, service } = yield* openAs(owner, { name: "mine" })
        expect((yield* service.list(otherOwner)).map((s) => s.sessionId)).not.toContain(id)
        expect((yield* service.list(owner)).map((s) => s.sessionId)).toContain(id)

        const attempts: ReadonlyArray<Effect.Effect<unknown, unknown>> = [
          service.read(otherOwner, id, {}),
          service.send(otherOwner, id, { text: "echo hijacked" }),
          service.signal(otherOwner, id, "SIGINT"),
          service.close(otherOwner, id)
        ]
        for (const attempt of attempts) {
          expect(failureOf(yield* Effect.exit(attempt))).toBeInstanceOf(Errors.ForeignSession)
        }
        const unknown = Ids.SessionId.make("s-000000000000")
        expect(failureOf(yield* Effect.exit(service.read(owner, unknown, {})))).toBeInstanceOf(
          Errors.SessionNotFound
        )
        expect(failureOf(yield* Effect.exit(service.open(owner, { name: "mine" })))).toMatchObject({
          _tag: "DuplicateName",
          name: "mine",
          sessionId: id
        })
        const theirs = yield* openAs(otherOwner, { name: "mine" })
        expect(theirs.opened.sessionId).not.toBe(id)

        expect((yield* service.close(owner, id)).outcome).toBe("closed")
        expect((yield* service.close(owner, id)).outcome).toBe("closed")
        expect(failureOf(yield* Effect.exit(service.close(otherOwner, id)))).toBeInstanceOf(Errors.ForeignSession)
        expect(yield* service.list(owner)).toEqual([])
      }))

    it.scoped("the sandbox policy of an owner is refused while it has open or opening sessions", () =>
      Effect.gen(function*() {
        const service = yield* PtyService.PtyService
        const readOnly: Sandbox.Policy = { mode: "read-only", network: "off", workspace }
        expect(yield* service.sandboxOf(switcher)).toEqual({ mode: "workspace-write", network: "off", workspace })

        const { id } = yield* openAs(switcher)
        const refused = failureOf(yield* Effect.exit(service.configureSandbox(switcher, readOnly)))
        expect(refused).toBeInstanceOf(Sandbox.SandboxInUse)
        expect(refused).toMatchObject({ current: "workspace-write", requested: "read-only", sessions: 1 })
        const network = failureOf(
          yield* Effect.exit(
            service.configureSandbox(switcher, { mode: "workspace-write", network: "host", workspace })
          )
        )
        expect(network).toBeInstanceOf(Sandbox.SandboxInUse)
        yield* service.configureSandbox(switcher, { mode: "workspace-write", network: "off", workspace })
        expect(failureOf(yield* Effect.exit(service.configureSandbox(owner, { mode: "read-only", network: "off" }))))
          .toMatchObject({ _tag: "InvalidConfig", field: "workspace" })

        yield* service.close(switcher, id)
        yield* service.configureSandbox(switcher, readOnly)
        expect(yield* service.sandboxOf(switcher)).toEqual(readOnly)
        expect(yield* service.sandboxOf(owner)).toMatchObject({ mode: "workspace-write" })

        const opening = yield* Effect.fork(openAs(switcher))
        yield* Effect.yieldNow()
        const whileOpening = failureOf(
          yield* Effect.exit(service.configureSandbox(switcher, { mode: "workspace-write", network: "off", workspace }))
        )
        expect(whileOpening).toBeInstanceOf(Sandbox.SandboxInUse)
        const { send } = yield* Fiber.join(opening)
        const write = yield* send("touch now-read-only")
        expect(write.output).toContain("Read-only file system")
      }))
  }
)
