import { StateFiles } from "@agent-terminal/node"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"

/** Why the daemon cannot take its socket. */
export class SocketUnavailable extends Data.TaggedError("SocketUnavailable")<{
  readonly socket: string
  readonly reason: string
}> {
  override get message() {
    return `cannot serve on ${this.socket}: ${this.reason}`
  }
}

const fail = (socket: string, reason: string) => Effect.fail(new SocketUnavailable({ socket, reason }))

/**
 * The socket's directory: created 0700 if missing (each directory made here is ours); an existing one must be
 * a directory (not a link) of ours that nobody else can enter. The server never changes the mode of a
 * directory it did not create: a socket asked for in a shared directory (`/tmp`, mode 1777) is refused with
 * the reason, and the directory is left as it is.
 */
export const prepareDirectory = (socket: string): Effect.Effect<void, SocketUnavailable> =>
  Effect.suspend(() => {
    const dir = path.dirname(socket)
    try {
      let stat = lstatOrUndefined(dir)
      if (stat === undefined) {
        StateFiles.makeDirectory(dir, 0o700)
        stat = fs.lstatSync(dir)
        // created here: ours to make 0700 whatever the umask did
        if ((stat.mode & 0o777) !== 0o700) fs.chmodSync(dir, 0o700)
        stat = fs.lstatSync(dir)
      }
      if (stat.isSymbolicLink()) return fail(socket, `${dir} is a symbolic link: give the socket's real directory`)
      if (!stat.isDirectory()) return fail(socket, `${dir} is not a directory`)
      if (typeof process.getuid === "function" && stat.uid !== process.getuid()) {
        return fail(socket, `${dir} belongs to uid ${stat.uid}, not to us`)
      }
      if ((stat.mode & 0o077) !== 0) {
        return fail(
          socket,
          `${dir} is open to others (mode ${(stat.mode & 0o7777).toString(8)}): the socket must be in a directory ` +
            "only this user can enter, and the server does not change a directory it did not create; give a path " +
            `in a new directory (it is created 0700), e.g. ${
              path.join(dir, `agent-terminal-${process.getuid?.() ?? "user"}`, path.basename(socket))
            }`
        )
      }
      return Effect.void
    } catch (error) {
      return fail(socket, `cannot prepare ${dir}: ${String(error)}`)
    }
  })

const lstatOrUndefined = (file: string): fs.Stats | undefined => {
  try {
    return fs.lstatSync(file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
    throw error
  }
}

/** Whether something accepts connections on the socket now. */
export const answers = (socket: string, timeoutMs = 1000): Effect.Effect<boolean> =>
  Effect.async<boolean>((resume) => {
    const connection = net.createConnection({ path: socket })
    const timer = setTimeout(() => {
      connection.destroy()
      resume(Effect.succeed(false))
    }, timeoutMs)
    connection.once("connect", () => {
      clearTimeout(timer)
      connection.destroy()
      resume(Effect.succeed(true))
    })
    connection.once("error", () => {
      clearTimeout(timer)
      resume(Effect.succeed(false))
    })
    return Effect.sync(() => {
      clearTimeout(timer)
      connection.destroy()
    })
  })

/**
 * One daemon per socket, decided atomically: a lock in Linux's abstract socket namespace, named after the
 * socket's path, held for the daemon's life and released by the kernel when it dies (never stale). Elsewhere
 * there is no such namespace: a live answer on the socket is the only check.
 */
export const lock = (socket: string): Effect.Effect<void, SocketUnavailable, Scope.Scope> => {
  if (process.platform !== "linux") return Effect.void
  const uid = typeof process.getuid === "function" ? process.getuid() : 0
  const digest = crypto.createHash("sha256").update(socket).digest("hex").slice(0, 32)
  const name = `\0agent-terminal/${uid}/${digest}`
  return Effect.acquireRelease(
    Effect.async<net.Server, SocketUnavailable>((resume) => {
      const server = net.createServer((connection) => connection.destroy())
      server.once("error", (error: NodeJS.ErrnoException) =>
        resume(
          error.code === "EADDRINUSE"
            ? fail(socket, "another agent-terminal daemon serves (or is starting on) this socket")
            : fail(socket, `cannot take the daemon lock: ${error.message}`)
        ))
      server.listen({ path: name }, () => {
        server.unref()
        resume(Effect.succeed(server))
      })
    }),
    (server) => Effect.sync(() => server.close())
  ).pipe(Effect.asVoid)
}

/**
 * Before listening: a live socket means another daemon (refused); a socket file nobody answers on is the
 * stale socket of a dead daemon (removed, and said so); anything else at the path is refused.
 */
export const clearStale = (socket: string): Effect.Effect<"none" | "stale-removed", SocketUnavailable> =>
  Effect.gen(function*() {
    let stat: fs.Stats
    try {
      stat = fs.lstatSync(socket)
    } catch {
      return "none" as const
    }
    if (!stat.isSocket()) return yield* fail(socket, "the path exists and is not a socket")
    if (yield* answers(socket)) return yield* fail(socket, "another agent-terminal daemon answers on it")
    try {
      fs.unlinkSync(socket)
    } catch (error) {
      return yield* fail(socket, `cannot remove the stale socket: ${String(error)}`)
    }
    return "stale-removed" as const
  })

/** Run `listen` with a umask that creates the socket 0600, then make sure it is 0600. */
export const listenPrivately = <A, E, R>(
  socket: string,
  listen: Effect.Effect<A, E, R>
): Effect.Effect<A, E | SocketUnavailable, R> =>
  Effect.acquireUseRelease(
    Effect.sync(() => process.umask(0o177)),
    () =>
      Effect.tap(listen, () =>
        Effect.try({
          try: () => fs.chmodSync(socket, 0o600),
          catch: (error) => new SocketUnavailable({ socket, reason: `cannot chmod the socket: ${String(error)}` })
        })),
    (previous) => Effect.sync(() => process.umask(previous))
  )

/** After the server closed: remove the socket if it is still the one we created. */
export const removeIfOurs = (socket: string, inode: number): void => {
  try {
    if (fs.lstatSync(socket).ino === inode) fs.unlinkSync(socket)
  } catch {
    // gone already
  }
}

/** The socket's inode, to recognise it at shutdown. */
export const inodeOf = (socket: string): number => {
  try {
    return fs.lstatSync(socket).ino
  } catch {
    return -1
  }
}
