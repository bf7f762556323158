/**
 * `doctor --nats URL`: whether this host reaches the fleet as the given user — the connection (servers,
 * TLS), the credentials (the servers accept the nkey), the permissions (a client's: hear the machines'
 * announcements, ask them to announce) — and which machines answer. Loaded only with `--nats`.
 */
import { Discovery, Nats } from "@agent-terminal/fleet"
import type { Doctor } from "@agent-terminal/node"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as FleetClient from "./FleetClient.js"
import type * as NatsOptions from "./NatsOptions.js"

const check = (name: string, ok: boolean, detail: string, consequence: string): Doctor.Check => ({
  name,
  ok,
  needed: true,
  detail,
  consequence
})

/** The checks of the fleet at `servers`, as the options' user. */
export const checks = (
  parsed: NatsOptions.ConnectionOptions,
  servers: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<Doctor.Check>> => {
  const connected = Effect.gen(function*() {
    const nats = yield* Nats.Nats
    const user = nats.user
    const connection = check(
      "nats_connection",
      true,
      `connected to ${nats.connection.getServer()} as ${user}`,
      "mcp --nats and serve --nats reach the fleet"
    )
    const directory = yield* Discovery.makeDirectory().pipe(Effect.either)
    if (directory._tag === "Left") {
      return [
        connection,
        check("nats_permissions", false, directory.left.message, "this user cannot be a client of the fleet")
      ]
    }
    // the machines answer the directory's "announce now" at once: listen until none joined for 500 ms
    // (at most 2 s)
    const deadline = (yield* Clock.currentTimeMillis) + 2_000
    let machines = yield* directory.right.machines
    let quietSince = yield* Clock.currentTimeMillis
    let now = quietSince
    while (now < deadline && (machines.length === 0 || now - quietSince < 500)) {
      yield* Effect.sleep("50 millis")
      const seen = yield* directory.right.machines
      now = yield* Clock.currentTimeMillis
      if (seen.length !== machines.length) quietSince = now
      machines = seen
    }
    return [
      connection,
      check(
        "nats_permissions",
        true,
        `${user} hears the machines' announcements: ${
          machines.length === 0
            ? "none answered"
            : machines.map((m) =>
              `${m.machine} (${m.free} free${m.labels.length > 0 ? `, ${m.labels.join(" ")}` : ""})`
            )
              .join(", ")
        }`,
        machines.length === 0 ? "no machine to open a terminal on yet" : "terminals can be placed"
      )
    ]
  })
  return Effect.scoped(
    Effect.flatMap(
      Layer.build(FleetClient.natsLayer(parsed, servers)),
      (context) => Effect.provide(connected, context)
    )
  ).pipe(
    Effect.catchAll((error) => {
      const reason = error.message
      const credentials = /authoriz|authentic|nkey|seed|credentials|jwt/i.test(reason)
      return Effect.succeed([
        check(
          credentials ? "nats_credentials" : "nats_connection",
          false,
          reason,
          credentials
            ? "the servers refuse this user: check --nats-user and --nats-nkey or --nats-creds"
            : "the fleet is out of reach"
        )
      ])
    })
  )
}
