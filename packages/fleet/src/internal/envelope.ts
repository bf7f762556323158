/**
 * The envelope of every message of the NATS transport: one byte of kind, then either a small JSON body
 * (control: open, challenge, heartbeat...) or a piece of a serialized frame with its frame number and part
 * index. A frame larger than a NATS message is sent as parts; the receiver puts them back together within a
 * bound, and drops a frame whose parts do not follow each other (lost around a reconnect).
 */

/** Kinds sent by a client. */
export const Client = {
  Open: 1,
  Confirm: 2,
  Part: 3,
  Frame: 4,
  Heartbeat: 5,
  Close: 6,
  Probe: 7,
  Interrupt: 8,
  /** Chunks of streams taken by the client: `{ acks: [[requestId, count], ...] }`. */
  Acks: 9
} as const

/** Kinds sent by a machine. */
export const Machine = {
  Challenge: 17,
  Ready: 18,
  Part: 19,
  Frame: 20,
  Pong: 21,
  Refused: 22,
  Gone: 23,
  Here: 24,
  /**
   * Frames of the session's that never arrived (NATS delivers at most once: a message can be dropped while the
   * cluster changes): `{ from, to }`, their numbers, inclusive. Also said by each `Pong` (`next`).
   */
  Lost: 25
} as const

/** The transport's version: a machine refuses a client of another (2: streams acknowledged in batches). */
export const VERSION = 2

const HEADER = 9
const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** `value` as JSON bytes. */
export const encodeJson = (value: unknown): Uint8Array => encoder.encode(JSON.stringify(value))

/** A control message: the kind and its JSON body. */
export const control = (kind: number, body: unknown = {}): Uint8Array => {
  const text = encoder.encode(JSON.stringify(body))
  const out = new Uint8Array(text.length + 1)
  out[0] = kind
  out.set(text, 1)
  return out
}

/** The JSON body of a control message, or `undefined` when it is larger than `maxBytes` or not an object. */
export const body = (data: Uint8Array, maxBytes = 4096): Record<string, unknown> | undefined =>
  json(data.subarray(1), maxBytes)

/** `bytes` as a JSON object, or `undefined` when larger than `maxBytes` or not an object. */
export const json = (bytes: Uint8Array, maxBytes: number): Record<string, unknown> | undefined => {
  if (bytes.length > maxBytes) return undefined
  try {
    const value: unknown = JSON.parse(decoder.decode(bytes))
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? value as Record<string, unknown>
      : undefined
  } catch {
    return undefined
  }
}

/** The messages that carry `bytes` as frame `frameNo`: parts of at most `chunk` bytes, the last of kind `last`. */
export const frame = (
  kinds: { readonly part: number; readonly last: number },
  frameNo: number,
  bytes: Uint8Array,
  chunk: number
): Array<Uint8Array> => {
  if (bytes.length <= chunk) return [single(kinds.last, frameNo, bytes)]
  const count = Math.ceil(bytes.length / chunk)
  const out: Array<Uint8Array> = []
  for (let part = 0; part < count; part++) {
    const piece = bytes.subarray(part * chunk, Math.min(bytes.length, (part + 1) * chunk))
    const message = new Uint8Array(piece.length + HEADER)
    const view = new DataView(message.buffer)
    message[0] = part === count - 1 ? kinds.last : kinds.part
    view.setUint32(1, frameNo >>> 0)
    view.setUint32(5, part)
    message.set(piece, HEADER)
    out.push(message)
  }
  return out
}

/** The frame number of a part or frame message (of either side). */
export const frameNumber = (message: Uint8Array): number => uint32(message, 1)

const uint32 = (bytes: Uint8Array, at: number) =>
  ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0

/** A frame that fits one message: its only part. */
export const single = (kind: number, frameNo: number, bytes: Uint8Array): Uint8Array => {
  const message = new Uint8Array(bytes.length + HEADER)
  message[0] = kind
  message[1] = frameNo >>> 24
  message[2] = frameNo >>> 16
  message[3] = frameNo >>> 8
  message[4] = frameNo
  message.set(bytes, HEADER)
  return message
}

/** What a part did to the frame being put together. */
export type Assembled =
  | { readonly _tag: "Frame"; readonly bytes: Uint8Array }
  | { readonly _tag: "Incomplete" }
  | { readonly _tag: "Dropped" }
  | { readonly _tag: "TooLarge"; readonly size: number }

/** Puts frames back together from their parts, keeping at most `maxFrameBytes`. */
export class Assembler {
  private frameNo = -1
  private nextPart = 0
  private parts: Array<Uint8Array> = []
  private size = 0

  constructor(readonly maxFrameBytes: number) {}

  /** The bytes held for the frame being put together. */
  get held(): number {
    return this.size
  }

  /** Forget a frame half put together (its other parts were lost). */
  reset(): void {
    this.frameNo = -1
    this.nextPart = 0
    if (this.parts.length > 0) this.parts = []
    this.size = 0
  }

  /** Take one message of a frame (`last`: it ends the frame). */
  push(message: Uint8Array, last: boolean): Assembled {
    if (message.length < HEADER) {
      this.reset()
      return { _tag: "Dropped" }
    }
    const frameNo = uint32(message, 1)
    const part = uint32(message, 5)
    const piece = message.subarray(HEADER)
    if (part === 0) {
      this.reset()
      this.frameNo = frameNo
    } else if (frameNo !== this.frameNo || part !== this.nextPart) {
      this.reset()
      return { _tag: "Dropped" }
    }
    const size = this.size + piece.length
    if (size > this.maxFrameBytes) {
      this.reset()
      return { _tag: "TooLarge", size }
    }
    if (last) {
      if (this.parts.length === 0) {
        this.reset()
        return { _tag: "Frame", bytes: piece }
      }
      const bytes = new Uint8Array(size)
      let offset = 0
      for (const stored of this.parts) {
        bytes.set(stored, offset)
        offset += stored.length
      }
      bytes.set(piece, offset)
      this.reset()
      return { _tag: "Frame", bytes }
    }
    this.parts.push(piece.slice())
    this.size = size
    this.nextPart = part + 1
    return { _tag: "Incomplete" }
  }
}
