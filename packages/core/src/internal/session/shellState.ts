import type { Emulator, ShellMarkers } from "@agent-terminal/terminal"

type Position = Emulator.Position

/** A decoded marker with its place in the stream and its sequence number. */
export interface SeenMarker {
  readonly kind: ShellMarkers.MarkerKind
  readonly exitCode: number | undefined
  readonly at: Position
  readonly seq: number
}

const KEEP = 64
const none: ReadonlyArray<SeenMarker> = []

/**
 * What the shell integration has reported so far: the recent markers in order and the shell's state
 * (at a prompt, running a command, at a continuation prompt).
 */
export class ShellState {
  #seq = 0
  readonly #recent: Array<SeenMarker> = []
  state: "starting" | "prompt" | "running" | "continuation" = "starting"

  get seq(): number {
    return this.#seq
  }

  record(marker: ShellMarkers.ShellMarker, at: Position): void {
    this.#seq++
    this.#recent.push({ kind: marker.kind, exitCode: marker.exitCode, at, seq: this.#seq })
    // trimmed back to KEEP once it holds twice as many: one move per KEEP markers, not one per marker
    if (this.#recent.length >= 2 * KEEP) this.#recent.splice(0, this.#recent.length - KEEP)
    if (marker.kind === "B") this.state = "prompt"
    else if (marker.kind === "C") this.state = "running"
    else if (marker.kind === "P") this.state = "continuation"
  }

  /**
   * Markers recorded after sequence number `seq`, oldest first (at most the newest KEEP: those older than
   * the newest KEEP may have been dropped). Found from the newest back: a send asks for the few since its
   * write.
   */
  since(seq: number): ReadonlyArray<SeenMarker> {
    const recent = this.#recent
    const first = Math.max(0, recent.length - KEEP)
    let index = recent.length
    while (index > first && recent[index - 1]!.seq > seq) index--
    return index === recent.length ? none : recent.slice(index)
  }
}

/** A prompt that followed a send: where it starts (`D`) and ends (`B`), and the exit status it reported. */
export interface PromptSeen {
  readonly start: SeenMarker
  readonly end: SeenMarker
  readonly exitCode: number | undefined
}

/**
 * The prompt that ends the current send, if the markers since the write show one: the newest marker is
 * a prompt end (`B`) right after its prompt start (`D`).
 */
export const promptAfter = (markers: ReadonlyArray<SeenMarker>): PromptSeen | undefined => {
  const end = markers[markers.length - 1]
  const start = markers[markers.length - 2]
  if (end?.kind !== "B" || start?.kind !== "D") return undefined
  return { start, end, exitCode: start.exitCode }
}

/** The first command start after the write: the command line's echo ends there. */
export const commandStart = (markers: ReadonlyArray<SeenMarker>): SeenMarker | undefined =>
  markers.find((marker) => marker.kind === "C")

/** A continuation prompt (`P`) is the newest marker: the shell waits for the rest of a command. */
export const continuationAfter = (markers: ReadonlyArray<SeenMarker>): SeenMarker | undefined => {
  const last = markers[markers.length - 1]
  return last?.kind === "P" ? last : undefined
}
