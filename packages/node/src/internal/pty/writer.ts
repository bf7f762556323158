import * as Effect from "effect/Effect"
import * as fs from "node:fs"

interface Pending {
  readonly bytes: Uint8Array
  offset: number
  /** All its bytes are in the kernel, or the writer was closed. */
  finished: boolean
  /** Told when it finishes: set only by a write that had to wait. */
  onFinished: (() => void) | undefined
}

const finish = (pending: Pending) => {
  pending.finished = true
  pending.onFinished?.()
}

/** Input to a pty master, in call order; each write completes once all its bytes are in the kernel. */
export interface PtyWriter {
  readonly write: (data: Uint8Array) => Effect.Effect<void>
  /** Drops what is still queued (its writers complete); later writes complete at once. */
  readonly close: () => void
}

/** EAGAIN retries on the next turn of the event loop before backing off to timers (a program not reading). */
const IMMEDIATE_RETRIES = 8
const MAX_BACKOFF_MS = 10

const codeOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined

/**
 * Writes straight to the master fd with `writeSync` (node-pty opens it `O_NONBLOCK`, so a full buffer is an
 * `EAGAIN`, never a block): the caller learns when its bytes landed, which node-pty's own queue never says.
 * `isOpen` is asked before every write: once node-pty has destroyed its socket the fd number may already
 * belong to another file.
 */
export const makePtyWriter = (fd: number, isOpen: () => boolean): PtyWriter => {
  const queue: Array<Pending> = []
  let closed = false
  let stalls = 0
  let immediate: ReturnType<typeof setImmediate> | undefined
  let timeout: ReturnType<typeof setTimeout> | undefined

  const drop = () => {
    for (const pending of queue.splice(0)) finish(pending)
  }
  const retry = () => {
    stalls++
    if (stalls <= IMMEDIATE_RETRIES) immediate = setImmediate(pump)
    else timeout = setTimeout(pump, Math.min(stalls - IMMEDIATE_RETRIES, MAX_BACKOFF_MS))
  }
  const pump = (): void => {
    immediate = undefined
    timeout = undefined
    while (queue.length > 0) {
      if (closed || !isOpen()) {
        closed = true
        return drop()
      }
      const head = queue[0]!
      try {
        head.offset += fs.writeSync(fd, head.bytes, head.offset, head.bytes.length - head.offset)
        stalls = 0
      } catch (error) {
        if (codeOf(error) === "EAGAIN") return retry()
        closed = true
        return drop()
      }
      if (head.offset >= head.bytes.length) {
        queue.shift()
        finish(head)
      }
    }
  }

  return {
    // The common write lands at once, in the call (a pty's input queue has room): it completes without
    // suspending the fiber; only one that waits behind others or for room is asynchronous.
    write: (data) =>
      Effect.suspend(() => {
        if (closed || data.length === 0) return Effect.void
        const pending: Pending = { bytes: data, offset: 0, finished: false, onFinished: undefined }
        queue.push(pending)
        if (queue.length === 1) pump()
        if (pending.finished) return Effect.void
        return Effect.async<void>((resume) => {
          if (pending.finished) return resume(Effect.void)
          pending.onFinished = () => resume(Effect.void)
        })
      }),
    close: () => {
      closed = true
      if (immediate !== undefined) clearImmediate(immediate)
      if (timeout !== undefined) clearTimeout(timeout)
      drop()
    }
  }
}

const scratch = Buffer.allocUnsafe(64 * 1024)

/**
 * Reads a non-blocking fd until it has nothing more (or after `maxReads` reads), each piece handed to
 * `onRead` (valid until the next read); `true` when it stopped on an empty fd or the limit, `false` on
 * any other error (EIO once the other side of a terminal is closed: whether more was pending is not known).
 */
const readWhileAvailable = (fd: number, maxReads: number, onRead: (bytes: Buffer) => void): boolean => {
  for (let reads = 0; reads < maxReads; reads++) {
    let n: number
    try {
      n = fs.readSync(fd, scratch, 0, scratch.length, null)
    } catch (error) {
      return codeOf(error) === "EAGAIN"
    }
    if (n <= 0) return true
    onRead(scratch.subarray(0, n))
  }
  return true
}

/** `readWhileAvailable` handing over copies: pieces delivered onwards outlive the next read. */
const readCopies = (fd: number, maxReads: number, onChunk: (chunk: Buffer) => unknown): boolean =>
  readWhileAvailable(fd, maxReads, (bytes) => onChunk(Buffer.from(bytes)))

/** At most this many reads by one `readOutputNow` (the rest follows through node's own reads). */
const PENDING_READS = 4

/**
 * Reads what the pty master holds now, in order, handing each piece to `deliver`; `true` unless the
 * terminal is gone. The master is `O_NONBLOCK`: with nothing to read, the kernel first runs the deferred
 * work that moves the program's output to the master's side (`n_tty_read` flushes the port's buffer work
 * before it answers `EAGAIN`), so everything written before the call is read by it.
 */
export const readOutputNow = (fd: number, deliver: (chunk: Uint8Array) => void): boolean =>
  readCopies(fd, PENDING_READS, deliver)

/** At most this many reads (64 KiB each) for what is left at the end: more than a pty's buffers hold. */
const REMAINING_READS = 64

/**
 * Make the end of node's reading wait for the end of the output. libuv ends a stream at a hangup
 * (`POLLHUP`) that comes after a partial read without reading again (`uv__stream_io`), taking the short
 * read for "all there was". On a pty that is wrong: the kernel moves what a program writes to the master
 * with deferred work, so a program that prints its last line and exits can leave that line pending while
 * the hangup of its exit is already seen, and node, then node-pty, ended without it (the last line of a
 * run, lost about once in forty runs under load). Before node takes the end of file, the master is read
 * until the kernel answers `EIO`: a read that finds nothing available first runs that pending work, so
 * the rest comes out, and goes into the stream ahead of the end, in order.
 */
export const readToTheEnd = (socket: { push: (chunk: Buffer | null) => boolean }, fd: number): void => {
  const push = socket.push.bind(socket)
  socket.push = (chunk) => {
    if (chunk === null) readCopies(fd, REMAINING_READS, push)
    return push(chunk)
  }
}

/**
 * Reads and drops whatever input waits in the pty slave's queue, unread by any program — what the line
 * discipline's flush does on a real ^C. Opened `O_NOCTTY | O_NONBLOCK`: we never become its controlling
 * process and never wait; a canonical-mode partial line stays (it is not readable yet).
 */
export const discardPendingInput = (ttyPath: string): number => {
  let fd: number
  try {
    fd = fs.openSync(ttyPath, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY)
  } catch {
    return 0
  }
  let total = 0
  try {
    // a canonical-mode read returns one line at a time: up to 64 of them
    readWhileAvailable(fd, 64, (bytes) => {
      total += bytes.length
    })
  } finally {
    fs.closeSync(fd)
  }
  return total
}
