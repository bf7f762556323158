/**
 * The daemon's side of the socket: `@effect/rpc`'s socket protocol (clients numbered as they connect, their
 * requests to the server, its responses back, a disconnect for each closed connection), over the daemon's
 * frames (`Framing`), with the bounds every connection is held to before it is trusted with more:
 *
 * - until it said `Hello`, a frame is at most `Framing.helloFrameBytes`; after, `maxFrameBytes`;
 * - a connection that has not said `Hello` within `helloTimeoutMs` is closed;
 * - a frame over its bound, or bytes that are not a message, close the connection at once.
 *
 * Nothing one connection sends is parsed more than once, so none can stall the others.
 */
import * as Socket from "@effect/platform/Socket"
import type * as SocketServer from "@effect/platform/SocketServer"
import * as RpcMessage from "@effect/rpc/RpcMessage"
import * as RpcServer from "@effect/rpc/RpcServer"
import * as Effect from "effect/Effect"
import * as Mailbox from "effect/Mailbox"
import * as Scope from "effect/Scope"
import * as Msgpackr from "msgpackr"
import * as Framing from "../Framing.js"

/** The bounds of every connection. */
export interface Bounds {
  readonly maxFrameBytes: number
  readonly helloTimeoutMs: number
}

const isHello = (message: unknown): boolean =>
  typeof message === "object" && message !== null && (message as { _tag?: unknown })._tag === "Request" &&
  (message as { tag?: unknown }).tag === "Hello"

/** A reason a connection is closed, for the log. */
const closing = (clientId: number, reason: string) =>
  Effect.logInfo(`daemon: connection #${clientId} closed: ${reason}`)

/** The protocol, served on every connection `server` accepts (forked in the scope). */
export const make = (server: SocketServer.SocketServer["Type"], bounds: Bounds) =>
  Effect.gen(function*() {
    const disconnects = yield* Mailbox.make<number>()
    let nextId = 0
    const clients = new Map<number, (response: RpcMessage.FromServerEncoded) => Effect.Effect<void>>()
    let writeRequest!: (clientId: number, message: RpcMessage.FromClientEncoded) => Effect.Effect<void>

    const onSocket = (socket: Socket.Socket) =>
      Effect.gen(function*() {
        const scope = yield* Effect.scope
        const id = nextId++
        const decoder = new Framing.Decoder(Framing.helloFrameBytes)
        const packr = new Msgpackr.Packr({ useRecords: true })
        let helloed = false
        yield* Scope.addFinalizer(
          scope,
          Effect.suspend(() => {
            clients.delete(id)
            return disconnects.offer(id)
          })
        )
        const writeRaw = yield* socket.writer
        const close = (reason: string) =>
          closing(id, reason).pipe(Effect.zipRight(Effect.ignore(writeRaw(new Socket.CloseEvent(1008, reason)))))
        clients.set(id, (response) =>
          Effect.suspend(() => {
            let frame: Uint8Array
            try {
              frame = Framing.encode(packr, response)
            } catch (cause) {
              frame = Framing.encode(packr, RpcMessage.ResponseDefectEncoded(cause))
            }
            return Effect.orDie(writeRaw(frame))
          }))
        yield* Effect.sleep(bounds.helloTimeoutMs).pipe(
          Effect.zipRight(Effect.suspend(() => helloed ? Effect.void : close("no Hello in time"))),
          Effect.forkScoped
        )
        yield* socket.runRaw((data) => {
          let messages: Array<unknown>
          try {
            messages = decoder.push(typeof data === "string" ? new TextEncoder().encode(data) : data)
          } catch (error) {
            return close(
              error instanceof Error && "maxBufferSize" in error
                ? `a frame over ${(error as { maxBufferSize: number }).maxBufferSize} bytes`
                : "bytes that are not a message"
            )
          }
          if (messages.length === 0) return Effect.void
          return Effect.forEach(messages, (message) => {
            if (!helloed && isHello(message)) {
              helloed = true
              decoder.maxFrameBytes = bounds.maxFrameBytes
            }
            return writeRequest(id, message as RpcMessage.FromClientEncoded)
          }, { discard: true })
        }).pipe(
          Effect.interruptible,
          Effect.catchAll(() => Effect.void)
        )
      })

    const protocol = yield* RpcServer.Protocol.make((writeRequest_) => {
      writeRequest = writeRequest_
      return Effect.succeed({
        disconnects,
        send: (clientId, response) => {
          const write = clients.get(clientId)
          return write === undefined ? Effect.void : write(response)
        },
        end: () => Effect.void,
        clientIds: Effect.sync(() => new Set(clients.keys())),
        initialMessage: Effect.succeedNone,
        supportsAck: true,
        supportsTransferables: false,
        supportsSpanPropagation: true
      })
    })
    yield* server.run((socket) => Effect.scoped(onSocket(socket))).pipe(Effect.interruptible, Effect.forkScoped)
    return protocol
  })
