/**
 * The client's side of one session with a machine: what is in flight, when the machine was last heard, and
 * the rules that turn silence, "no responders", a dropped NATS connection or the machine's own word into the
 * typed failure of every call in flight.
 */
import { ConnectionLost, MachineRefused, MachineUnavailable } from "../FleetErrors.js"

/** How a `ConnectionLost` of a session the machine forgot begins: that session is over for good. */
export const sessionForgotten = "the machine no longer knows this client's session"

/** The reason of the `MachineUnavailable` of a machine that said it stops: that session is over for good. */
export const machineStopping = "the machine is stopping"

/** A failure of the calls in flight; `broken`: the session is over, later calls fail the same way. */
export interface Failure {
  readonly error: MachineUnavailable | ConnectionLost | MachineRefused
  readonly broken: boolean
}

/** The timing of the liveness checks. */
export interface Timing {
  /** While anything is in flight, ping this often. */
  readonly pingIntervalMs: number
  /** When idle, a heartbeat this often (keeps the session, and the machine's leave to answer, alive). */
  readonly heartbeatMs: number
  /** A ping unanswered this long while something is in flight: the machine is unavailable. */
  readonly unavailableAfterMs: number
}

/** The session's state, with the decisions as methods returning what to do. */
export class ClientSession {
  readonly inflight = new Set<string>()
  /** Calls failed while the connection was down: interrupted at the machine once it is back. */
  toInterrupt: Array<string> = []
  broken: Failure | undefined
  connected = true
  lastSent = 0
  unansweredSince: number | undefined
  seq = 0

  constructor(readonly machine: string, readonly timing: Timing) {}

  /** Something came from the machine: it is alive. */
  heard(): void {
    this.unansweredSince = undefined
  }

  /** A heartbeat goes out now. */
  pinged(now: number): number {
    this.lastSent = now
    if (this.unansweredSince === undefined) this.unansweredSince = now
    return ++this.seq
  }

  /** Fail what is in flight with `error` (nothing when nothing is; a broken session always records it). */
  private fail(error: Failure["error"], broken: boolean): Failure | undefined {
    if (this.broken !== undefined) return undefined
    const failure = { error, broken }
    if (broken) this.broken = failure
    if (this.inflight.size === 0) return broken ? failure : undefined
    this.toInterrupt.push(...this.inflight)
    this.inflight.clear()
    this.unansweredSince = undefined
    return failure
  }

  /** NATS answered "no responders": nothing serves the machine's subject now. */
  noResponders(now: number): Failure | undefined {
    return this.fail(
      new MachineUnavailable({
        machine: this.machine,
        since: now,
        reason: "nothing serves its subject (NATS: no responders)"
      }),
      false
    )
  }

  /** The timer's tick: `"ping"` when a heartbeat is due, a failure when the pings went unanswered too long. */
  tick(now: number): "ping" | Failure | undefined {
    if (this.broken !== undefined || !this.connected) return undefined
    const busy = this.inflight.size > 0
    if (busy && this.unansweredSince !== undefined && now - this.unansweredSince > this.timing.unavailableAfterMs) {
      return this.fail(
        new MachineUnavailable({
          machine: this.machine,
          since: this.unansweredSince,
          reason: `no answer to its pings for ${now - this.unansweredSince} ms`
        }),
        false
      )
    }
    return busy || now - this.lastSent >= this.timing.heartbeatMs ? "ping" : undefined
  }

  /**
   * Frames this session sent never reached the machine (NATS delivers at most once; a message can be dropped
   * while the cluster changes, and the pings that follow it still go through): the calls in flight fail, the
   * lost ones never having run.
   */
  lost(frames: number): Failure | undefined {
    return this.fail(
      new ConnectionLost({
        machine: this.machine,
        reason: `${frames} message(s) to the machine were lost on the way (NATS delivers at most once): a call ` +
          "they carried did not run; another in flight at the time may or may not have"
      }),
      false
    )
  }

  /** This client's NATS connection dropped. */
  disconnected(server: string): Failure | undefined {
    this.connected = false
    return this.fail(
      new ConnectionLost({
        machine: this.machine,
        reason: `this client's NATS connection to ${server} dropped while the call was in flight: it may or may not ` +
          "have run"
      }),
      false
    )
  }

  /** The connection is back. */
  reconnected(): void {
    this.connected = true
    this.unansweredSince = undefined
  }

  /** The failed calls the machine should stop, once. */
  takeInterrupts(): Array<string> {
    const ids = this.toInterrupt
    this.toInterrupt = []
    return ids
  }

  /** The machine said the session is over. */
  gone(reason: string, now: number): Failure | undefined {
    return this.fail(
      reason === "stopping"
        ? new MachineUnavailable({ machine: this.machine, since: now, reason: machineStopping })
        : new ConnectionLost({
          machine: this.machine,
          reason: `${sessionForgotten} (it restarted, or the session expired)`
        }),
      true
    )
  }

  /** The machine refused the session. */
  refused(reason: string): Failure | undefined {
    return this.fail(new MachineRefused({ machine: this.machine, reason }), true)
  }

  /** Why a call cannot be sent now, if it cannot. */
  unsendable(): Failure["error"] | undefined {
    if (this.broken !== undefined) return this.broken.error
    if (!this.connected) {
      return new ConnectionLost({
        machine: this.machine,
        reason: "this client is not connected to NATS now (it is reconnecting): the call was not sent"
      })
    }
    return undefined
  }
}
