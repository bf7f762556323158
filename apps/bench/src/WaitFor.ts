/**
 * `waitFor`: the time from a server's banner leaving the program to the `matched` result in the caller's
 * hands. The program (python3) stamps the banner with the wall clock just before it writes it; the result's
 * arrival is read on the same clock. Foreground (`terminal_send` with `waitFor`) and background (the first
 * return of a `run_in_background` send, the task then killed).
 */
import type { Session } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import type { Group, RunOptions } from "./Harness.js"
import { guard, openShell, owner, size, tally, withTerminal } from "./Harness.js"
import type { Metric } from "./Metric.js"
import { allMet, distribution } from "./Metric.js"
import { regexCost } from "./RegexCost.js"

const group = "waitfor"

/** A server that starts, waits 50 ms, prints its banner stamped with the wall clock (ms), and serves on. */
const server = "python3 -c \"import time; time.sleep(0.05); print('listening on port 8080 at %.3f' % " +
  "(time.time() * 1000), flush=True); time.sleep(60)\""

const waitFor = { regex: "port (\\d+) at ([\\d.]+)" }

const TARGET_MS = 5
const target = `p50 ≤ ${TARGET_MS} ms from the banner's bytes to the matched result`

const latencyOf = (result: Session.SendResult) => {
  const stamped = Number(result.match?.groups?.[1])
  return Number.isFinite(stamped) ? Date.now() - stamped : undefined
}

const measure = (options: RunOptions) =>
  withTerminal(
    {},
    Effect.gen(function*() {
      const n = size(options, 40, 12)
      const { id, send, service } = yield* openShell({ name: "waitfor" })
      const foreground: Array<number> = []
      const background: Array<number> = []
      const reasons: Array<string> = []
      for (let i = 0; i < n; i++) {
        const result = yield* service.send(owner, id, { text: server, waitFor, timeoutMs: 20_000 })
        reasons.push(result.waitReason)
        const ms = latencyOf(result)
        if (ms !== undefined) foreground.push(ms)
        yield* service.send(owner, id, { keys: ["C-c"], timeoutMs: 10_000 })
        const started = yield* service.send(owner, id, { text: server, waitFor, background: true, timeoutMs: 20_000 })
        reasons.push(`background:${started.waitReason}`)
        const bg = latencyOf(started)
        if (bg !== undefined) background.push(bg)
        // the background task holds the session: cancelling it kills the task (a real SIGINT)
        yield* service.cancel(owner, id)
      }
      yield* send("true")
      options.progress(`waitfor: ${n}/${n}`)
      const row = (name: string, samples: ReadonlyArray<number>, how: string): Metric => {
        const stats = distribution(samples)
        return {
          name,
          group,
          kind: "ours",
          unit: "ms",
          ...stats,
          compared: [],
          target: { text: target, met: allMet([stats.value !== null && stats.value <= TARGET_MS]) },
          notes: [`${how}: python3 prints 'listening on port 8080 at <ms>' 50 ms after it starts; × ${n}`],
          detail: { waitReason: tally(reasons) }
        }
      }
      return [
        row("waitfor.foreground", foreground, "terminal_send with waitFor {regex: 'port (\\d+) at ([\\d.]+)'}"),
        row("waitfor.background", background, "the same with run_in_background: the first return, then task_kill")
      ]
    })
  )

/** The group. */
export const waitForGroup: Group = {
  name: group,
  description: "waitFor: from a server's banner leaving the program to the matched result (foreground, " +
    "background); a regex's cost per MiB of output on RE2 beside JavaScript's RegExp",
  run: (options) =>
    guard(
      [{ name: "waitfor.foreground", group, unit: "ms", target }, {
        name: "waitfor.background",
        group,
        unit: "ms",
        target
      }],
      measure(options)
    ).pipe(
      Effect.zipWith(
        guard([
          { name: "waitfor.regex.re2", group, unit: "ms/MiB" },
          { name: "waitfor.regex.js", group, unit: "ms/MiB" },
          { name: "waitfor.regex.re2.nested", group, unit: "ms/MiB" }
        ], regexCost(options)),
        (rows, cost) => [...rows, ...cost]
      )
    )
}
