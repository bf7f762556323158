/**
 * Two `RpcServer.Protocol`s served by one server: the daemon's socket (client ids 0, 1, 2…) and a machine's
 * NATS sessions (client ids -1, -2, -3…), so one owners' table holds both without two clients sharing an id.
 * A NATS client's `Hello` acts as an owner of its NATS user: `credential` turns the owner name it declares
 * and its NATS user (proven by the session's handshake) into the credential the daemon sees, so two NATS users
 * never share an owner by naming the same one, and the NATS user is all the proof a named owner needs.
 */
import type { FromClientEncoded } from "@effect/rpc/RpcMessage"
import * as RpcServer from "@effect/rpc/RpcServer"
import * as Effect from "effect/Effect"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"

const toNats = (clientId: number) => -clientId - 1
const fromNats = (clientId: number) => -clientId - 1

const headerOf = (headers: unknown, name: string): string | undefined => {
  if (!Array.isArray(headers)) return undefined
  for (const entry of headers) {
    if (Array.isArray(entry) && entry[0] === name && typeof entry[1] === "string") return entry[1]
  }
  return undefined
}

/** The request as the NATS client's owner makes it: a named owner's `Hello` under its NATS user. */
const asNatsOwner = (message: FromClientEncoded, options: Options): FromClientEncoded => {
  if (message._tag !== "Request" || message.tag !== "Hello") return message
  const payload = message.payload as { readonly owner?: { readonly name?: unknown } } | null
  const name = payload?.owner?.name
  if (typeof name !== "string") return message
  const user = headerOf(message.headers, options.userHeader) ?? "unknown"
  return { ...message, payload: { ...payload, owner: options.credential(name, user) } }
}

/** How NATS clients are told apart and bound to owners. */
export interface Options {
  /** The header the NATS protocol puts the session's user in. */
  readonly userHeader: string
  /** The owner credential of owner name `name` declared by NATS user `user`. */
  readonly credential: (name: string, user: string) => { readonly name: string; readonly secret: string }
  /**
   * How session `sessionId` was lost, when its id names an earlier run of this machine (`undefined` for any
   * other id): the request is answered `SessionLost` at once, never served by a fresh pty.
   */
  readonly lost: (
    sessionId: string
  ) => Effect.Effect<{ readonly lostAt: string; readonly reason: "daemon-stopped" | "daemon-died" } | undefined>
}

/** The session id a request names, if it names one. */
const sessionIdOf = (message: FromClientEncoded): string | undefined => {
  if (message._tag !== "Request") return undefined
  const sessionId = (message.payload as { readonly sessionId?: unknown } | null)?.sessionId
  return typeof sessionId === "string" ? sessionId : undefined
}

/** The socket's protocol and the NATS one, as one. */
export const merge = (
  socket: RpcServer.Protocol["Type"],
  nats: RpcServer.Protocol["Type"],
  options: Options
): Effect.Effect<RpcServer.Protocol["Type"], never, Scope.Scope> =>
  Effect.gen(function*() {
    const disconnects = yield* Mailbox.make<number>()
    yield* socket.disconnects.take.pipe(
      Effect.flatMap((clientId) => disconnects.offer(clientId)),
      Effect.forever,
      Effect.ignore,
      Effect.forkScoped
    )
    yield* nats.disconnects.take.pipe(
      Effect.flatMap((clientId) => disconnects.offer(toNats(clientId))),
      Effect.forever,
      Effect.ignore,
      Effect.forkScoped
    )
    return RpcServer.Protocol.of({
      run: (f) =>
        Effect.zipRight(
          socket.run(f),
          nats.run((clientId, message) => {
            const sessionId = sessionIdOf(message)
            if (sessionId === undefined || message._tag !== "Request") {
              return f(toNats(clientId), asNatsOwner(message, options))
            }
            return Effect.flatMap(options.lost(sessionId), (lost) =>
              lost === undefined ? f(toNats(clientId), message) : nats.send(clientId, {
                _tag: "Exit",
                requestId: String(message.id),
                exit: {
                  _tag: "Failure",
                  cause: { _tag: "Fail", error: { _tag: "SessionLost", sessionId, ...lost } }
                }
              }))
          }),
          { concurrent: true }
        ),
      disconnects,
      send: (clientId, response, transferables) =>
        clientId < 0 ? nats.send(fromNats(clientId), response) : socket.send(clientId, response, transferables),
      end: (clientId) => clientId < 0 ? nats.end(fromNats(clientId)) : socket.end(clientId),
      clientIds: Effect.zipWith(socket.clientIds, nats.clientIds, (a, b) => {
        const all = new Set(a)
        for (const id of b) all.add(toNats(id))
        return all
      }),
      initialMessage: Effect.succeed(Option.none()),
      supportsAck: socket.supportsAck && nats.supportsAck,
      supportsTransferables: false,
      supportsSpanPropagation: socket.supportsSpanPropagation
    })
  })
