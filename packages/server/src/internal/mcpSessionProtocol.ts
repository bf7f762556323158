/**
 * The rpc protocol under the `McpServer` of one HTTP MCP session (`McpHttp`): every forwarded message is
 * a client of its own, as `RpcServer.makeProtocolWithHttpApp` makes one per request, but fed the message
 * the endpoint already read and decoded (so the body is parsed once, and a batch never reaches it).
 */
import type * as RpcMessage from "@effect/rpc/RpcMessage"
import * as RpcServer from "@effect/rpc/RpcServer"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import * as Mailbox from "effect/Mailbox"

/** Hand a message to a session's `McpServer`; its responses, none for a notification. */
export type Forward = (
  message: RpcMessage.FromClientEncoded,
  headers: ReadonlyArray<[string, string]>
) => Effect.Effect<ReadonlyArray<RpcMessage.FromServerEncoded>>

/**
 * The rpc protocol of one MCP session: every forwarded message is a client of its own (as
 * `RpcServer.makeProtocolWithHttpApp` does), whose responses are collected until the server ends it.
 */
export const sessionProtocol = Effect.gen(function*() {
  const clients = new Map<number, {
    readonly responses: Array<RpcMessage.FromServerEncoded>
    readonly ended: Deferred.Deferred<void>
  }>()
  let nextClient = 0
  let forward: Forward = () => Effect.succeed([])
  const protocol = yield* RpcServer.Protocol.make((writeRequest) =>
    Effect.gen(function*() {
      const disconnects = yield* Mailbox.make<number>()
      forward = (message, headers) =>
        Effect.suspend(() => {
          const id = nextClient++
          const client = {
            responses: [] as Array<RpcMessage.FromServerEncoded>,
            ended: Deferred.unsafeMake<void>(FiberId.none)
          }
          clients.set(id, client)
          const withHeaders = message._tag === "Request"
            ? { ...message, headers: [...headers, ...message.headers] }
            : message
          return writeRequest(id, withHeaders).pipe(
            Effect.zipRight(writeRequest(id, { _tag: "Eof" })),
            Effect.zipRight(Deferred.await(client.ended)),
            Effect.as(client.responses as ReadonlyArray<RpcMessage.FromServerEncoded>),
            Effect.onInterrupt(() =>
              message._tag === "Request" ? writeRequest(id, { _tag: "Interrupt", requestId: message.id }) : Effect.void
            ),
            Effect.ensuring(Effect.sync(() => {
              clients.delete(id)
              disconnects.unsafeOffer(id)
            }))
          )
        })
      return {
        disconnects,
        send: (clientId, response) =>
          Effect.sync(() => {
            clients.get(clientId)?.responses.push(response)
          }),
        end: (clientId) =>
          Effect.suspend(() => {
            const client = clients.get(clientId)
            return client === undefined ? Effect.void : Deferred.succeed(client.ended, undefined)
          }),
        clientIds: Effect.sync(() => new Set(clients.keys())),
        initialMessage: Effect.succeedNone,
        supportsAck: false,
        supportsTransferables: false,
        supportsSpanPropagation: false
      }
    })
  )
  return { protocol, forward: ((message, headers) => Effect.suspend(() => forward(message, headers))) as Forward }
})
