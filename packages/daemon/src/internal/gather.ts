/**
 * A watch's events as the socket sends them: what waited together goes as one message (`Watch.coalesce`),
 * and while output streams — a message carried at least `streamingBytes` — the next one waits `waitMs` for
 * more first. Each message costs both ends of the socket a fixed amount of work (its RPC chunk, the
 * client's acknowledgement, the encoding and decoding around them), the same for 4 KiB as for 64 KiB: a
 * flood of output sent as it is read is mostly that work. Interactive output (an echo, a prompt: a few
 * hundred bytes) never waits; the first message after a pause never waits.
 */
import { Watch } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

/** How long a message waits after one of streaming output (ms). */
export const defaultWaitMs = 10

/** A message with at least this much output means output is streaming. */
export const defaultStreamingBytes = 4096

const outputBytes = (events: Iterable<Watch.WatchEvent>): number => {
  let bytes = 0
  for (const event of events) if (event._tag === "Output") bytes += event.data.length
  return bytes
}

/** `events` gathered into messages (see above). */
export const gather = <E, R>(
  events: Stream.Stream<Watch.WatchEvent, E, R>,
  options: { readonly waitMs?: number; readonly streamingBytes?: number } = {}
): Stream.Stream<Watch.WatchEvent, E, R> =>
  Stream.suspend(() => {
    const waitMs = options.waitMs ?? defaultWaitMs
    const streamingBytes = options.streamingBytes ?? defaultStreamingBytes
    let streaming = false
    return Stream.mapChunksEffect(events, (chunk) => {
      const message = Watch.coalesce(chunk)
      const wait = streaming
      streaming = outputBytes(message) >= streamingBytes
      return wait ? Effect.as(Effect.sleep(waitMs), message) : Effect.succeed(message)
    })
  })
