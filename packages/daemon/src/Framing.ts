/**
 * The daemon's frames: each protocol message is one msgpack value behind its length (4 bytes, big-endian).
 * msgpack itself has no length: `@effect/rpc`'s own msgpack parser kept an unfinished message and parsed it
 * again from its first byte on every chunk that came, so one connection that sent a header declaring
 * 2^32-1 items and then 1.6 MiB slowly stalled every other owner (each chunk cost more than the last). Here
 * a frame's bytes are only collected until its length is reached and parsed once; a declared length over
 * the bound ends the connection at its header, before any of it is kept.
 *
 * @since 0.3.0
 */
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as Layer from "effect/Layer"
import * as Msgpackr from "msgpackr"

/**
 * The default bound of one frame the daemon takes after a connection's `Hello` (16 MiB: a send's text is at
 * most `maxInputBytes`, 1 MiB by default, and a batch carries several).
 *
 * @since 0.3.0
 */
export const defaultMaxFrameBytes = 16 * 1024 * 1024

/**
 * The bound of a frame before the connection said `Hello` (a `Hello` is a few hundred bytes).
 *
 * @since 0.3.0
 */
export const helloFrameBytes = 64 * 1024

const HEADER_BYTES = 4

/**
 * A frame longer than the bound: the connection is dropped.
 *
 * @since 0.3.0
 */
export const tooLarge = (maxBufferSize: number, bufferSize: number) =>
  new RpcSerialization.RpcSerializationError({ reason: "BufferSizeExceeded", maxBufferSize, bufferSize })

/**
 * One connection's reader of frames: `push` each chunk, get the messages it completed. Each byte is copied
 * once; an unfinished frame is never parsed.
 *
 * @since 0.3.0
 */
export class Decoder {
  /** The bound of the next frame (raised once the connection said `Hello`). */
  maxFrameBytes: number
  readonly #unpackr: Msgpackr.Unpackr
  readonly #header = new Uint8Array(HEADER_BYTES)
  #headerHave = 0
  #body: Array<Uint8Array> = []
  #bodyHave = 0
  #bodyLength = -1

  constructor(maxFrameBytes: number, unpackr = new Msgpackr.Unpackr({ useRecords: true })) {
    this.maxFrameBytes = maxFrameBytes
    this.#unpackr = unpackr
  }

  /** Bytes held for the frame being received (at most its bound). */
  get buffered(): number {
    return this.#headerHave + this.#bodyHave
  }

  /**
   * The messages `chunk` completes, in order; throws `RpcSerializationError` when a frame declares more than
   * the bound (the caller drops the connection).
   */
  push(chunk: Uint8Array): Array<unknown> {
    const messages: Array<unknown> = []
    let at = 0
    while (at < chunk.length) {
      if (this.#bodyLength < 0) {
        const take = Math.min(HEADER_BYTES - this.#headerHave, chunk.length - at)
        this.#header.set(chunk.subarray(at, at + take), this.#headerHave)
        this.#headerHave += take
        at += take
        if (this.#headerHave < HEADER_BYTES) break
        const header = this.#header
        const length = ((header[0]! << 24) >>> 0) + (header[1]! << 16) + (header[2]! << 8) + header[3]!
        if (length > this.maxFrameBytes) throw tooLarge(this.maxFrameBytes, length)
        this.#bodyLength = length
      }
      const take = Math.min(this.#bodyLength - this.#bodyHave, chunk.length - at)
      if (take > 0) {
        // a copy: the socket may reuse its buffer
        this.#body.push(chunk.slice(at, at + take))
        this.#bodyHave += take
        at += take
      }
      if (this.#bodyHave === this.#bodyLength) {
        const body = this.#body.length === 1 ? this.#body[0]! : Buffer.concat(this.#body, this.#bodyLength)
        this.#body = []
        this.#bodyHave = 0
        this.#bodyLength = -1
        this.#headerHave = 0
        messages.push(this.#unpackr.unpack(body))
      }
    }
    return messages
  }
}

/**
 * One message as a frame.
 *
 * @since 0.3.0
 */
export const encode = (packr: Msgpackr.Packr, message: unknown): Uint8Array => {
  const payload = packr.pack(message)
  const frame = new Uint8Array(HEADER_BYTES + payload.length)
  new DataView(frame.buffer).setUint32(0, payload.length)
  frame.set(payload, HEADER_BYTES)
  return frame
}

/**
 * The frames as an `RpcSerialization` (what the client's socket protocol takes), with `maxFrameBytes` for
 * what it receives.
 *
 * @since 0.3.0
 */
export const serialization = (maxFrameBytes: number): RpcSerialization.RpcSerialization["Type"] =>
  RpcSerialization.RpcSerialization.of({
    contentType: "application/x-agent-terminal-frames",
    includesFraming: true,
    unsafeMake() {
      const decoder = new Decoder(maxFrameBytes)
      const packr = new Msgpackr.Packr({ useRecords: true })
      return {
        decode: (bytes) => decoder.push(typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes),
        encode: (message) => encode(packr, message)
      }
    }
  })

/**
 * The client's serialization: what a daemon sends is bounded by what it was asked for (a watch's piece, a
 * read's page), so the bound is generous (256 MiB) and only stops a runaway.
 *
 * @since 0.3.0
 */
export const layerClient: Layer.Layer<RpcSerialization.RpcSerialization> = Layer.succeed(
  RpcSerialization.RpcSerialization,
  serialization(256 * 1024 * 1024)
)
