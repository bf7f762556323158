/**
 * A WebSocket client written on a raw TCP socket (RFC 6455), for attacks a library would not send: any
 * header, a frame's header alone, a huge declared length, many frames in one write.
 */
import * as crypto from "node:crypto"
import * as net from "node:net"

/** A message from the server: text, binary, or the close frame's code. */
export type Frame =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "binary"; readonly data: Buffer }
  | { readonly type: "close"; readonly code: number }

/** One masked frame as a client sends it (`length`: the declared payload length, default the payload's). */
export const frame = (opcode: number, payload: Buffer, declared = payload.length): Buffer => {
  const header: Array<number> = [0x80 | opcode]
  if (declared < 126) header.push(0x80 | declared)
  else if (declared < 65536) header.push(0x80 | 126, declared >> 8, declared & 0xff)
  else {
    header.push(0x80 | 127)
    const length = Buffer.alloc(8)
    length.writeBigUInt64BE(BigInt(declared))
    header.push(...length)
  }
  const mask = crypto.randomBytes(4)
  const masked = Buffer.from(payload)
  for (let i = 0; i < masked.length; i++) masked[i]! ^= mask[i % 4]!
  return Buffer.concat([Buffer.from(header), mask, masked])
}

/** A JSON text frame. */
export const json = (value: unknown) => frame(1, Buffer.from(JSON.stringify(value)))

/** An open raw WebSocket: what the server sent so far, and whether it closed the connection. */
export interface RawSocket {
  readonly status: number
  readonly socket: net.Socket
  readonly frames: Array<Frame>
  readonly closed: Promise<void>
  readonly isClosed: () => boolean
  /** Wait for a frame that satisfies `test` (or the close of the connection: `undefined`). */
  readonly next: (test: (frame: Frame) => boolean, timeoutMs?: number) => Promise<Frame | undefined>
  readonly end: () => void
}

/** Open `url` (`ws:` on the server's address) with `headers`; resolve once the server answered the handshake. */
export const open = (url: string, headers: Record<string, string>) =>
  new Promise<RawSocket>((resolve, reject) => {
    const target = new URL(url)
    const socket = net.connect(Number(target.port), target.hostname)
    const frames: Array<Frame> = []
    let buffer = Buffer.alloc(0)
    let status: number | undefined
    let closed = false
    const waiters = new Set<() => void>()
    const wake = () => waiters.forEach((waiter) => waiter())
    const closedPromise = new Promise<void>((done) =>
      socket.once("close", () => {
        closed = true
        wake()
        done()
      })
    )
    const parse = () => {
      while (buffer.length >= 2) {
        const opcode = buffer[0]! & 0x0f
        let length = buffer[1]! & 0x7f
        let at = 2
        if (length === 126) {
          if (buffer.length < 4) return
          length = buffer.readUInt16BE(2)
          at = 4
        } else if (length === 127) {
          if (buffer.length < 10) return
          length = Number(buffer.readBigUInt64BE(2))
          at = 10
        }
        if (buffer.length < at + length) return
        const payload = buffer.subarray(at, at + length)
        buffer = buffer.subarray(at + length)
        if (opcode === 1) frames.push({ type: "text", text: payload.toString("utf8") })
        else if (opcode === 2) frames.push({ type: "binary", data: Buffer.from(payload) })
        else if (opcode === 8) {
          frames.push({ type: "close", code: payload.length >= 2 ? payload.readUInt16BE(0) : 1005 })
        }
      }
      wake()
    }
    socket.on("connect", () => {
      const lines = [
        `GET ${target.pathname}${target.search} HTTP/1.1`,
        `Host: ${target.host}`,
        "Connection: Upgrade",
        "Upgrade: websocket",
        "Sec-WebSocket-Version: 13",
        `Sec-WebSocket-Key: ${crypto.randomBytes(16).toString("base64")}`,
        ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)
      ]
      socket.write(`${lines.join("\r\n")}\r\n\r\n`)
    })
    socket.on("data", (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk])
      if (status === undefined) {
        const end = buffer.indexOf("\r\n\r\n")
        if (end === -1) return
        status = Number(/^HTTP\/1\.1 (\d{3})/.exec(buffer.subarray(0, end).toString("latin1"))?.[1] ?? 0)
        buffer = buffer.subarray(end + 4)
        resolve({
          status,
          socket,
          frames,
          closed: closedPromise,
          isClosed: () => closed,
          next: (test, timeoutMs = 15_000) =>
            new Promise((done) => {
              let seen = 0
              const check = () => {
                for (; seen < frames.length; seen++) {
                  if (test(frames[seen]!)) return finish(frames[seen])
                }
                if (closed) finish(undefined)
              }
              const timer = setTimeout(() => finish(undefined), timeoutMs)
              const finish = (found: Frame | undefined) => {
                clearTimeout(timer)
                waiters.delete(check)
                done(found)
              }
              waiters.add(check)
              check()
            }),
          end: () => socket.destroy()
        })
      }
      parse()
    })
    socket.on("error", (error) => {
      if (status === undefined) reject(error)
    })
    socket.on("close", () => {
      if (status === undefined) reject(new Error("closed before the handshake's answer"))
    })
  })
