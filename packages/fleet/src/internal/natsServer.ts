/** One `nats-server` process of a test fleet: started from its configuration file, killed, started again. */
import * as Effect from "effect/Effect"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"

/** A port nothing listens on now (the kernel's pick, released at once). */
export const freePort = (host: string): Effect.Effect<number, Error> =>
  Effect.async<number, Error>((resume) => {
    const server = net.createServer()
    server.once("error", (error) => resume(Effect.fail(error)))
    server.listen(0, host, () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resume(Effect.succeed(port)))
    })
  })

/** A server process: its pid while it runs. */
export interface Process {
  readonly child: childProcess.ChildProcess
  readonly exited: Promise<void>
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * Start `nats-server -c config` with `env`, its log appended to `logFile`; resolves once the log says the
 * server is ready (fails with the log's tail when it exits first or takes longer than `timeoutMs`).
 */
export const start = (
  config: string,
  logFile: string,
  env: Readonly<Record<string, string>>,
  timeoutMs = 15_000
): Promise<Process> => {
  const offset = fs.existsSync(logFile) ? fs.statSync(logFile).size : 0
  const log = fs.openSync(logFile, "a")
  const child = childProcess.spawn("nats-server", ["-c", config], {
    env: { ...process.env, ...env },
    stdio: ["ignore", log, log]
  })
  fs.closeSync(log)
  let exitCode: number | null | undefined
  const exited = new Promise<void>((resolve) => {
    child.once("exit", (code) => {
      exitCode = code
      resolve()
    })
    child.once("error", () => {
      exitCode = -1
      resolve()
    })
  })
  const tail = () => fs.readFileSync(logFile, "utf8").slice(offset).split("\n").slice(-15).join("\n")
  return (async () => {
    // the wall clock: a Promise polling a real nats-server, sleeping on setTimeout (no Effect clock runs here)
    const deadline = Date.now() + timeoutMs
    while (Date.now() < deadline) { // the wall clock, as above
      if (exitCode !== undefined) throw new Error(`nats-server exited (${exitCode}) before it was ready:\n${tail()}`)
      if (fs.readFileSync(logFile, "utf8").slice(offset).includes("Server is ready")) return { child, exited }
      await sleep(20)
    }
    child.kill("SIGKILL")
    await exited
    throw new Error(`nats-server was not ready within ${timeoutMs} ms:\n${tail()}`)
  })()
}

/** Send `signal` and wait for the exit. */
export const stop = async (server: Process, signal: NodeJS.Signals = "SIGKILL"): Promise<void> => {
  if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill(signal)
  await server.exited
}
