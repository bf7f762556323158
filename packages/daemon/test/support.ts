import { Ids } from "@agent-terminal/core"
import { NodeTerminal } from "@agent-terminal/node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { DaemonServer, TerminalRegistry } from "../src/index.js"

/** A fresh private directory for one daemon's socket (removed with the scope). */
export const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "at-daemon-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

/** Settings fast enough for tests. */
export const testConfig = { idleSilenceMs: 1_000, openTimeoutMs: 15_000, timeoutMs: 20_000, disposeGraceMs: 200 }

/** A daemon served from this process (real ptys, a real socket), with the given registry. */
export const daemonLayer = (
  socket: string,
  options: {
    readonly detachedTtlMs?: number
    readonly registry?: Layer.Layer<TerminalRegistry.TerminalRegistry, any>
  } = {}
) =>
  DaemonServer.layer({ socket, detachedTtlMs: options.detachedTtlMs, heartbeatMs: 200 }).pipe(
    Layer.provide(Layer.mergeAll(NodeTerminal.layer(testConfig), options.registry ?? TerminalRegistry.layerMemory)),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
  )

export const owner = Ids.OwnerId.make("test")
