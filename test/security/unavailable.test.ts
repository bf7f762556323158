/**
 * When the sandbox cannot be applied, opening a confined session fails with `SandboxUnavailable` and the
 * reason — nothing runs unconfined in its place.
 */
import { Errors, PtyService } from "@agent-terminal/core"
import { Bubblewrap } from "@agent-terminal/node"
import { describe, expect, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { owner, TestTerminal } from "../support/terminal.js"
import { failureOf, makeWorkspace, openAs, SandboxedTerminal } from "./support.js"

const workspace = makeWorkspace("unavailable")
const blockedBwrap = path.join(workspace, "bwrap-blocked")
fs.writeFileSync(
  blockedBwrap,
  "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n",
  { mode: 0o755 }
)

layer(SandboxedTerminal({ mode: "workspace-write", workspace, bwrap: "/nonexistent/bin/bwrap" }), {
  excludeTestServices: true
})("bwrap missing", (it) => {
  it.scoped("a confined open fails with SandboxUnavailable naming the missing binary; nothing is left open", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(openAs(owner))
      const error = failureOf(exit)
      expect(error).toBeInstanceOf(Errors.SandboxUnavailable)
      expect(error).toMatchObject({ mode: "workspace-write" })
      expect((error as Errors.SandboxUnavailable).reason).toContain("/nonexistent/bin/bwrap")
      const service = yield* PtyService.PtyService
      expect(yield* service.list(owner)).toEqual([])
    }))

  it.scoped("danger-full-access needs no bwrap: it opens unconfined, as asked", () =>
    Effect.gen(function*() {
      const service = yield* PtyService.PtyService
      yield* service.configureSandbox(owner, { mode: "danger-full-access", network: "host" })
      const { opened, send } = yield* openAs(owner, { cwd: "/" })
      expect(opened.containment).not.toBe("pid-namespace")
      expect((yield* send("pwd")).output).toBe("/")
      yield* service.closeOwner(owner)
      yield* service.configureSandbox(owner, { mode: "workspace-write", network: "off", workspace })
    }))
})

layer(SandboxedTerminal({ mode: "read-only", workspace, bwrap: blockedBwrap }), { excludeTestServices: true })(
  "user namespaces blocked",
  (it) => {
    it.scoped("a confined open fails with SandboxUnavailable carrying bwrap's own reason", () =>
      Effect.gen(function*() {
        const error = failureOf(yield* Effect.exit(openAs(owner)))
        expect(error).toBeInstanceOf(Errors.SandboxUnavailable)
        expect((error as Errors.SandboxUnavailable).reason).toContain("No permissions to creating new namespace")
        expect((error as Errors.SandboxUnavailable).message).toMatch(/^sandbox read-only unavailable: /)
      }))
  }
)

layer(TestTerminal(), { excludeTestServices: true })("no sandbox layer (Sandbox.layerNone)", (it) => {
  it.scoped("the default is danger-full-access; asking for a confined mode fails every open", () =>
    Effect.gen(function*() {
      const service = yield* PtyService.PtyService
      expect(yield* service.sandboxOf(owner)).toMatchObject({ mode: "danger-full-access" })
      yield* service.configureSandbox(owner, { mode: "read-only", network: "off", workspace })
      const error = failureOf(yield* Effect.exit(openAs(owner)))
      expect(error).toBeInstanceOf(Errors.SandboxUnavailable)
      expect((error as Errors.SandboxUnavailable).reason).toContain("no sandbox is configured")
      yield* service.configureSandbox(owner, { mode: "danger-full-access", network: "host" })
    }))
})

describe("sandbox configuration", () => {
  it.effect("a confined mode needs an existing workspace; workspace-write cannot make / writable", () =>
    Effect.gen(function*() {
      const missing = failureOf(yield* Effect.exit(Bubblewrap.make({ mode: "workspace-write" })))
      expect(missing).toMatchObject({ _tag: "InvalidConfig", field: "workspace" })
      const absent = failureOf(
        yield* Effect.exit(Bubblewrap.make({ mode: "read-only", workspace: path.join(workspace, "none") }))
      )
      expect(absent).toMatchObject({ _tag: "InvalidConfig", field: "workspace" })
      const root = failureOf(yield* Effect.exit(Bubblewrap.make({ mode: "workspace-write", workspace: "/" })))
      expect(root).toMatchObject({ _tag: "InvalidConfig", field: "workspace" })
      const full = yield* Bubblewrap.make({ mode: "danger-full-access" })
      expect(full.policy.mode).toBe("danger-full-access")
    }))
})
