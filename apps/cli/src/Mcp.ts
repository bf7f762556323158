/**
 * `agent-terminal mcp`: the terminal tools over MCP on stdio. One connection, one owner; when the client
 * goes away (stdin ends) every session it opened is closed. Only the protocol is written to stdout.
 */
import { Ids, TerminalConfig } from "@agent-terminal/core"
import { NodeTerminal } from "@agent-terminal/node"
import { Handlers, McpTools } from "@agent-terminal/tools"
import { McpServer } from "@effect/ai"
import * as NodeSink from "@effect/platform-node/NodeSink"
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"

/** The server's name and version as announced in `initialize`. */
export const serverInfo = { name: "agent-terminal", version: "0.1.0" }

const stdioOwner = Ids.OwnerId.make("mcp-stdio")

/** Completes when the client closes our stdin: the connection is over. */
const stdinClosed = Effect.gen(function*() {
  const closed = yield* Deferred.make<void>()
  const done = () => Deferred.unsafeDone(closed, Effect.void)
  process.stdin.once("end", done)
  process.stdin.once("close", done)
  yield* Deferred.await(closed)
})

/** Serve the terminal tools on stdio until the client disconnects. */
export const serveStdio = (config: TerminalConfig.TerminalConfigInput) =>
  Effect.gen(function*() {
    const settings = yield* TerminalConfig.make(config)
    const server = McpTools.layer({
      maxResultBytes: settings.maxResultBytes,
      ownerOf: () => Effect.succeed(stdioOwner)
    })
      .pipe(
        Layer.provide(Handlers.layer),
        Layer.provide(McpServer.layerStdio({ ...serverInfo, stdin: NodeStream.stdin, stdout: NodeSink.stdout })),
        Layer.provide(NodeTerminal.layer(config))
      )
    yield* Effect.raceFirst(Layer.launch(server), stdinClosed)
  }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, Logger.prettyLogger({ stderr: true, colors: false }))))
