/**
 * Why a TLS connection to a NATS server failed, when the client only saw a timeout: with TLS 1.3 the server
 * checks the client's certificate after the client finished its handshake, and the NATS client reports its
 * refusal (an alert) as a connect timeout. The probe speaks the start of the protocol itself (the server's
 * INFO in plain text, then TLS with the same files) and returns what the TLS layer said, or `undefined`.
 */
import * as fs from "node:fs"
import * as net from "node:net"
import * as tls from "node:tls"

/** The TLS files of a connection. */
export interface Files {
  readonly caFile?: string | undefined
  readonly certFile?: string | undefined
  readonly keyFile?: string | undefined
}

const MAX_INFO = 64 * 1024

/** The TLS layer's error on `url` with `files` within `timeoutMs`, or `undefined` when it had none. */
export const probe = (url: string, files: Files, timeoutMs: number): Promise<string | undefined> =>
  new Promise((resolve) => {
    let parsed: URL
    try {
      parsed = new URL(url.includes("://") ? url : `nats://${url}`)
    } catch {
      return resolve(undefined)
    }
    let done = false
    const sockets: Array<net.Socket> = []
    const finish = (reason: string | undefined) => {
      if (done) return
      done = true
      clearTimeout(timer)
      for (const socket of sockets) socket.destroy()
      resolve(reason)
    }
    const timer = setTimeout(() => finish(undefined), timeoutMs)
    const plain = net.connect(Number(parsed.port || 4222), parsed.hostname)
    sockets.push(plain)
    plain.on("error", () => finish(undefined))
    let info = ""
    const onData = (chunk: Buffer) => {
      info += chunk.toString("latin1")
      if (info.length > MAX_INFO) return finish(undefined)
      if (!info.includes("\r\n")) return
      plain.off("data", onData)
      let secured: tls.TLSSocket
      try {
        secured = tls.connect({
          socket: plain,
          servername: net.isIP(parsed.hostname) === 0 ? parsed.hostname : undefined,
          ...(files.caFile === undefined ? {} : { ca: fs.readFileSync(files.caFile) }),
          ...(files.certFile === undefined ? {} : { cert: fs.readFileSync(files.certFile) }),
          ...(files.keyFile === undefined ? {} : { key: fs.readFileSync(files.keyFile) })
        })
      } catch (error) {
        return finish((error as Error).message)
      }
      sockets.push(secured)
      secured.on("error", (error) => finish(error.message))
      // the server's verdict on this certificate comes after the handshake: ask for an answer
      secured.on("secureConnect", () => secured.write("PING\r\n"))
      secured.on("data", () => finish(undefined))
      secured.on("close", () => finish(undefined))
    }
    plain.on("data", onData)
  })
