/**
 * How far a stream may run ahead of its reader over NATS. `@effect/rpc` sends a stream's next chunk only after
 * the client acknowledged the last one: one chunk per round trip, and a round trip over NATS crosses two
 * servers. The machine acknowledges a chunk itself while fewer than `maxChunks` chunks and `maxBytes` bytes of
 * the stream are unacknowledged by the client, and passes the client's acknowledgements on once it is past
 * either: the stream stays within that window of its reader, and the client acknowledges in batches.
 */

/** The window of every stream of a machine. */
export interface Window {
  readonly maxChunks: number
  readonly maxBytes: number
}

interface Stream {
  readonly sizes: Array<number>
  bytes: number
  /** The server waits for an acknowledgement this machine has not given yet. */
  owed: boolean
}

/** The windows of one session's streams, by request id. */
export class Credits {
  private readonly streams = new Map<string, Stream>()

  constructor(readonly window: Window) {}

  private within(stream: Stream): boolean {
    return stream.sizes.length < this.window.maxChunks && stream.bytes < this.window.maxBytes
  }

  /** A chunk of `bytes` went to the client: whether the server may send the next one at once. */
  sent(requestId: string, bytes: number): boolean {
    let stream = this.streams.get(requestId)
    if (stream === undefined) {
      stream = { sizes: [], bytes: 0, owed: false }
      this.streams.set(requestId, stream)
    }
    stream.sizes.push(bytes)
    stream.bytes += bytes
    if (this.within(stream)) return true
    stream.owed = true
    return false
  }

  /** The client took `count` more chunks of the stream: whether the acknowledgement the server waits for is due. */
  acked(requestId: string, count: number): boolean {
    const stream = this.streams.get(requestId)
    if (stream === undefined) return false
    for (let i = 0; i < count && stream.sizes.length > 0; i++) stream.bytes -= stream.sizes.shift()!
    if (!stream.owed || !this.within(stream)) return false
    stream.owed = false
    return true
  }

  /** The stream ended. */
  ended(requestId: string): void {
    this.streams.delete(requestId)
  }
}
