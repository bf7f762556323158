/**
 * The floor of the lean group's memory and send rows, forked: a bare Node process holding node-pty and
 * nothing else of ours.
 *
 * - `hold <n>`: n raw bashes at their prompt; reports `{ ready: true }` over IPC, then stays until killed (its
 *   RSS is read from outside, as the server's is).
 * - `roundtrip <warmup> <n>`: one raw bash; after `warmup` round trips of `true`, reports this process's CPU
 *   per round trip over n more (`{ cpuUsPerSend }`), and exits.
 * - `serve`: one raw bash; reports `{ ready: true }`, then for each `{ sends: n }` it is sent does n round trips
 *   of `true` and reports this process's CPU over them (`{ cpuUs }`): the floor measured in blocks interleaved
 *   with the processes it is the floor of (`LeanSend`). It kills its bash and exits when the channel closes.
 */
import { RawTerminal } from "./RawPty.js"

const [mode, first, second] = process.argv.slice(2)

const hold = async (n: number) => {
  const bashes: Array<RawTerminal> = []
  for (let i = 0; i < n; i++) {
    const bash = RawTerminal.bash()
    await bash.next()
    bashes.push(bash)
  }
  process.once("SIGTERM", () => {
    void Promise.all(bashes.map((bash) => bash.kill())).then(() => process.exit(0))
  })
  process.send?.({ ready: true })
}

const roundTrips = async (warmup: number, n: number) => {
  const bash = RawTerminal.bash()
  await bash.next()
  for (let i = 0; i < warmup; i++) await bash.roundTrip("true\r")
  const before = process.cpuUsage()
  for (let i = 0; i < n; i++) await bash.roundTrip("true\r")
  const used = process.cpuUsage(before)
  await bash.kill()
  return { cpuUsPerSend: (used.user + used.system) / n }
}

const serve = async () => {
  const bash = RawTerminal.bash()
  await bash.next()
  process.on("message", (message: { readonly sends: number }) => {
    void (async () => {
      const before = process.cpuUsage()
      for (let i = 0; i < message.sends; i++) await bash.roundTrip("true\r")
      const used = process.cpuUsage(before)
      process.send?.({ cpuUs: used.user + used.system })
    })()
  })
  process.once("disconnect", () => void bash.kill().then(() => process.exit(0)))
  process.send?.({ ready: true })
}

const done = (report: object) => process.send?.(report, () => process.exit(0))

if (mode === "hold") void hold(Number(first ?? "1"))
else if (mode === "roundtrip") void roundTrips(Number(first ?? "500"), Number(second ?? "1000")).then(done)
else if (mode === "serve") void serve()
else {
  process.stderr.write(`PtyHolder: unknown mode ${mode}\n`)
  process.exit(2)
}
