/**
 * A session's terminal geometry: its size, changed for the pty, the emulator and every watcher at once — by
 * the agent (`terminal_resize`, refused while a person holds the lease) or by the person who holds it (to
 * their window).
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { OwnerId, SessionId } from "../../Ids.js"
import { NotInControl } from "../../Oversight.js"
import { ResizeRequest } from "../../Session.js"
import * as Validation from "../../Validation.js"
import { record } from "../oversight/audit.js"
import { held } from "../oversight/lease.js"
import { type Deps, lookup } from "./registry.js"
import { exitedError, type SessionRuntime } from "./runtime.js"

const checkSize = Validation.decoder(ResizeRequest, { root: "size" })

/** Resize the pty, the emulator and every watcher's terminal, in one step between two parses. */
const applySize = (runtime: SessionRuntime, cols: number, rows: number) =>
  Effect.zipRight(
    runtime.process.resize(cols, rows),
    Effect.sync(() => {
      runtime.emulator.resize(cols, rows)
      runtime.size = { cols, rows }
      runtime.watchers.resized(cols, rows)
      return { cols, rows }
    })
  )

/** The agent's resize (`terminal_resize`): refused while a person holds the lease. */
export const resize = (deps: Deps) =>
  Effect.fn("PtyService.resize")(function*(owner: OwnerId, id: SessionId, request: { cols: number; rows: number }) {
    const size = checkSize(request)
    if (Either.isLeft(size)) return yield* size.left
    const runtime = yield* lookup(deps, owner, id)
    if (runtime.exit !== undefined) return yield* exitedError(runtime)
    const refused = runtime.control.refusal(id)
    if (refused !== undefined) return yield* refused
    const result = yield* applySize(runtime, size.right.cols, size.right.rows)
    yield* record(deps, runtime, owner, "resize", `${result.cols}x${result.rows}`)
    return result
  })

/** The resize of the person who holds the lease (the live view, to their window). */
export const personResize = (runtime: SessionRuntime, person: string, cols: number, rows: number) =>
  Effect.gen(function*() {
    const holding = held(runtime, person)
    if (holding instanceof NotInControl) return yield* holding
    if (runtime.exit !== undefined) return yield* exitedError(runtime)
    const size = checkSize({ cols, rows })
    if (Either.isLeft(size)) return yield* size.left
    return yield* applySize(runtime, size.right.cols, size.right.rows)
  })
