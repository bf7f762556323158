/**
 * A bound on what a WebSocket client may send, applied to the raw bytes before the `ws` library buffers
 * them: `@effect/platform-node` builds its `WebSocketServer` without options, so `ws` would buffer a frame
 * of up to its default 100 MiB whole before our own message bound saw it (a 90 MiB frame grew the server by
 * 270 MiB). The frames' headers are read as the bytes pass (RFC 6455 §5.2: 2 to 14 bytes, the payload's
 * length in the first 10); a data frame, or a message's frames together, longer than the bound ends the
 * connection at its header, before its payload is read.
 */
import type * as net from "node:net"

/** An incremental reader of frame headers: `feed` each chunk; `false` once the client went over the bound. */
export class FrameBound {
  readonly #maxMessageBytes: number
  readonly #header = new Uint8Array(14)
  #have = 0
  /** Payload bytes of the current frame not seen yet. */
  #remaining = 0
  /** Bytes of the current message's data frames so far. */
  #message = 0

  constructor(maxMessageBytes: number) {
    this.#maxMessageBytes = maxMessageBytes
  }

  feed(chunk: Uint8Array): boolean {
    let at = 0
    while (at < chunk.length) {
      if (this.#remaining > 0) {
        const take = Math.min(this.#remaining, chunk.length - at)
        this.#remaining -= take
        at += take
        continue
      }
      this.#header[this.#have++] = chunk[at++]!
      const needed = this.#needed()
      if (this.#have < needed) continue
      if (!this.#frame()) return false
      this.#have = 0
    }
    return true
  }

  /** The length of the header being read, as far as its first two bytes tell. */
  #needed(): number {
    if (this.#have < 2) return 2
    const length7 = this.#header[1]! & 0x7f
    const extended = length7 === 126 ? 2 : length7 === 127 ? 8 : 0
    const mask = (this.#header[1]! & 0x80) !== 0 ? 4 : 0
    return 2 + extended + mask
  }

  /** A whole header: its payload's length checked against the bound. */
  #frame(): boolean {
    const header = this.#header
    const opcode = header[0]! & 0x0f
    const length7 = header[1]! & 0x7f
    let length = length7
    if (length7 === 126) length = (header[2]! << 8) | header[3]!
    else if (length7 === 127) {
      // a length past 2^32 is over any bound; the top byte's high bit must be 0 anyway
      if (header[2]! !== 0 || header[3]! !== 0 || header[4]! !== 0 || header[5]! !== 0) return false
      length = ((header[6]! << 24) >>> 0) + (header[7]! << 16) + (header[8]! << 8) + header[9]!
    }
    if (opcode === 1 || opcode === 2) this.#message = length
    else if (opcode === 0) this.#message += length
    else if (length > 125) return false // a control frame carries at most 125 bytes
    if (this.#message > this.#maxMessageBytes) return false
    this.#remaining = length
    return true
  }
}

/**
 * Watch an upgraded connection's bytes (`head`: what came with the upgrade request): past the bound the
 * connection is destroyed at once. Registered before the WebSocket library's own reader, so at most the
 * chunk in hand (a socket read, ≤ 64 KiB) reaches it.
 */
export const bound = (socket: net.Socket, head: Uint8Array, maxMessageBytes: number): void => {
  const frames = new FrameBound(maxMessageBytes)
  if (!frames.feed(head)) {
    socket.destroy()
    return
  }
  const onData = (chunk: Uint8Array) => {
    if (frames.feed(chunk)) return
    socket.off("data", onData)
    socket.destroy()
  }
  socket.prependListener("data", onData)
}
