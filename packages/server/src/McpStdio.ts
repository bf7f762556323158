/**
 * The terminal tools over MCP on stdio: newline-delimited JSON-RPC on a readable and a writable (the
 * process's stdin and stdout), one owner for the connection.
 *
 * `@effect/ai`'s `McpServer` serves the protocol (initialize, tools/list, ping, notifications); this
 * module is its transport, an `@effect/rpc` server `Protocol` over the Node streams themselves (no Effect
 * stream per chunk), and it answers the calls of the terminal tools through `ToolCall` directly (see
 * `internal/toolRequests.ts`: the same result, without the rpc server's per-request machinery).
 * Every answer carries its request's own id and the code JSON-RPC gives its error (`internal/jsonRpc.ts`):
 * an unknown method is `-32601`, a line that is not JSON a parse error (`-32700`, id null) after which the
 * connection goes on, a batch an invalid request (2025-06-18 removed them). A tool call with a
 * `progressToken` gets `notifications/progress` while it waits (`internal/progress.ts`).
 *
 * @since 0.2.0
 */
import type { Ids } from "@agent-terminal/core"
import { type Deployment, type Handlers, Instructions, McpTools, ToolCall } from "@agent-terminal/tools"
import { McpServer } from "@effect/ai"
import type * as RpcMessage from "@effect/rpc/RpcMessage"
import * as RpcServer from "@effect/rpc/RpcServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import * as CallWorkers from "./internal/callWorkers.js"
import * as JsonRpc from "./internal/jsonRpc.js"
import * as Progress from "./internal/progress.js"
import * as ToolRequests from "./internal/toolRequests.js"
import * as McpRegistration from "./McpRegistration.js"

/**
 * Settings of a stdio server.
 *
 * @since 0.2.0
 */
export interface Options {
  /** The server's name and version, announced in `initialize`. */
  readonly name: string
  readonly version: string
  /** The bound of every tool result. */
  readonly maxResultBytes: number
  /** The owner of every call of this connection. */
  readonly owner: Ids.OwnerId
  /** Where requests come from (`process.stdin`). */
  readonly input: NodeJS.ReadableStream
  /** Where responses go (`process.stdout`): nothing else is written to it. */
  readonly output: NodeJS.WritableStream
  /** The tools and parameters exposed (default: all). */
  readonly deployment?: Deployment.Deployment | undefined
  /** The guide sent in `initialize` (default: `Instructions.text` of the deployment). */
  readonly instructions?: string | undefined
}

/** Lines out of chunks, scanning each byte once (a long line costs its length, not its length squared). */
const lineSplitter = (onLine: (line: string) => void) => {
  let pending: Array<string> = []
  return (chunk: string) => {
    let start = 0
    let newline = chunk.indexOf("\n")
    while (newline !== -1) {
      const piece = chunk.slice(start, newline)
      const line = pending.length === 0 ? piece : pending.join("") + piece
      pending = []
      if (line.trim() !== "") onLine(line)
      start = newline + 1
      newline = chunk.indexOf("\n", start)
    }
    if (start < chunk.length) pending.push(chunk.slice(start))
  }
}

/**
 * The rpc protocol over the streams, with the terminal tools' calls served by `caller`.
 *
 * @since 0.2.0
 */
export const makeProtocol = (
  options: Pick<Options, "input" | "output" | "owner" | "instructions" | "deployment">,
  caller: ToolCall.Caller
): Effect.Effect<RpcServer.Protocol["Type"], never, Scope.Scope> =>
  RpcServer.Protocol.make((writeRequest) =>
    Effect.gen(function*() {
      const runtime = yield* Effect.runtime<never>()
      const runFork = Runtime.runFork(runtime)
      const codec = JsonRpc.makeCodec(options.instructions)
      const toolList = McpTools.list(options.deployment)
      const forwarded = yield* Mailbox.make<RpcMessage.FromClientEncoded>()
      const calls = CallWorkers.make(runFork)
      let open = true
      const write = (message: object) => {
        if (open) options.output.write(`${JSON.stringify(message)}\n`)
      }
      // the client went away (EPIPE on a write, a read error): the connection is over, answers are dropped
      const onError = () => {
        open = false
      }
      options.output.on("error", onError)
      options.input.on("error", onError)
      const respond = (response: RpcMessage.FromServerEncoded) => {
        const encoded = codec.encode(response)
        if (encoded !== undefined) write(encoded)
      }

      const serveTool = (request: ToolRequests.ToolRequest) => {
        const call = ToolRequests.serve(caller, options.owner, request)
        calls.run(
          ToolRequests.idKey(request.id),
          Effect.map(
            request.progressToken === undefined ? call : Progress.reporting(call, {
              token: request.progressToken,
              owner: options.owner,
              emit: write,
              intervalMs: options.deployment?.progressIntervalMs
            }),
            write
          )
        )
      }

      const onLine = (line: string) => {
        const message = JsonRpc.parse(line)
        const request = ToolRequests.toolRequest(message)
        if (request !== undefined) return serveTool(request)
        const listId = ToolRequests.toolListId(message)
        if (listId !== undefined) return write(JsonRpc.resultResponse(listId, toolList))
        const cancelled = ToolRequests.cancelledId(message)
        if (cancelled !== undefined && calls.interrupt(ToolRequests.idKey(cancelled))) return
        const route = codec.route(message)
        if (route._tag === "Answer") write(route.response)
        else if (route._tag === "Forward") forwarded.unsafeOffer(route.message)
      }

      const split = lineSplitter(onLine)
      const decoder = new TextDecoder()
      const onData = (chunk: Uint8Array | string) =>
        split(typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true }))
      options.input.on("data", onData)
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          options.input.off("data", onData)
          options.input.off("error", onError)
          options.output.off("error", onError)
        }).pipe(Effect.zipRight(calls.interruptAll))
      )

      yield* forwarded.take.pipe(
        Effect.flatMap((message) => writeRequest(0, message)),
        Effect.forever,
        Effect.forkScoped,
        Effect.interruptible
      )

      return {
        disconnects: yield* Mailbox.make<number>(),
        send: (_clientId, response) => Effect.sync(() => respond(response)),
        end: () => Effect.void,
        clientIds: Effect.succeed(new Set([0])),
        initialMessage: Effect.succeedNone,
        supportsAck: false,
        supportsTransferables: false,
        supportsSpanPropagation: false
      }
    })
  )

/**
 * Serve the terminal tools on the streams for the life of the scope.
 *
 * @since 0.2.0
 */
export const make = (
  options: Options
): Effect.Effect<void, never, Scope.Scope | Handlers.Handlers> =>
  Effect.gen(function*() {
    const server = yield* McpServer.McpServer.make
    const deployment = options.deployment
    yield* McpRegistration.register({ maxResultBytes: options.maxResultBytes, owner: options.owner, deployment }).pipe(
      Effect.provideService(McpServer.McpServer, server)
    )
    const caller = yield* ToolCall.make(options)
    const protocol = yield* makeProtocol({
      ...options,
      instructions: options.instructions ?? Instructions.text(deployment)
    }, caller)
    yield* McpServer.run({ name: options.name, version: options.version }).pipe(
      Effect.provideService(McpServer.McpServer, server),
      Effect.provideService(RpcServer.Protocol, protocol),
      Effect.forkScoped
    )
  })

/**
 * The stdio server as a layer.
 *
 * @since 0.2.0
 */
export const layer = (options: Options): Layer.Layer<never, never, Handlers.Handlers> =>
  Layer.scopedDiscard(make(options))
