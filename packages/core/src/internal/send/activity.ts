/**
 * What `/proc` says about a session's processes, as results carry it: what the foreground program is doing
 * (`ProcessActivity`, in a `timeout` or `inferred_idle` result) and a listening socket (`Listener`, what a
 * `listening` wait found); re-exported by `Session`.
 */
import * as Schema from "effect/Schema"

/**
 * What a process is doing now: on a CPU (`running`), asleep (`sleeping`: sleep(1), a timer), waiting for a
 * child to end (`waiting_child`), blocked reading this terminal, a pipe, a socket or a file, writing (a full
 * pipe), waiting for a connection (`accepting`) or on one (`connecting`), for events on several descriptors
 * (`polling`: an event loop), for a lock (`waiting_lock`), stopped by a signal, `blocked` in the kernel
 * otherwise, or `exited`. `detail` names the syscall and descriptor when known (`clock_nanosleep`,
 * `read fd 0 (pipe)`).
 *
 * @since 0.4.0
 */
export const ProcessActivity = Schema.Struct({
  pid: Schema.Number,
  name: Schema.String,
  state: Schema.Literal(
    "running",
    "sleeping",
    "waiting_child",
    "reading_terminal",
    "reading_pipe",
    "reading_socket",
    "reading_file",
    "writing",
    "accepting",
    "connecting",
    "polling",
    "waiting_lock",
    "stopped",
    "blocked",
    "exited"
  ),
  detail: Schema.optional(Schema.String)
})
/** @since 0.4.0 */
export type ProcessActivity = typeof ProcessActivity.Type

/**
 * A socket a process listens on: TCP over IPv4 or IPv6 (`address` and `port`), or a Unix socket (`address`
 * is its path, `@name` for an abstract one).
 *
 * @since 0.4.0
 */
export const Listener = Schema.Struct({
  pid: Schema.Number,
  name: Schema.String,
  protocol: Schema.Literal("tcp", "tcp6", "unix"),
  address: Schema.String,
  port: Schema.optional(Schema.Number)
})
/** @since 0.4.0 */
export type Listener = typeof Listener.Type

/** How a model reads an activity: `sleep (pid 42) sleeping: clock_nanosleep`. */
export const activityText = (activity: ProcessActivity): string =>
  `${activity.name} (pid ${activity.pid}) ${activity.state.replace(/_/g, " ")}${
    activity.detail === undefined ? "" : `: ${activity.detail}`
  }`

/** How a model reads a listener: `python3 (pid 42) listening on 0.0.0.0:8000`. */
export const listenerText = (listener: Listener): string =>
  `${listener.name} (pid ${listener.pid}) listening on ${
    listener.protocol === "unix"
      ? `unix ${listener.address}`
      : listener.protocol === "tcp6"
      ? `[${listener.address}]:${listener.port}`
      : `${listener.address}:${listener.port}`
  }`
