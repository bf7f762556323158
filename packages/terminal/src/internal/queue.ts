/** The first ring's size (a power of two). */
const INITIAL = 16
/** No ring yet: most queues (a quick command's capture tail) never receive a line, so none is allocated. */
const NONE = new Float64Array(0)

/**
 * A FIFO of lines (row, text, UTF-8 bytes) in a ring of parallel arrays that doubles when full: no object
 * per line, no copy per shift, so holding tens of thousands of lines costs the garbage collector nothing
 * but the strings, and a capture's tail, which pushes and drops a line per row of a flood, moves no
 * memory once the ring has grown to the tail's size.
 */
export class LineQueue {
  #rows = NONE
  #bytes = NONE
  #texts: Array<string> = []
  #mask = -1
  #head = 0
  #size = 0

  get size(): number {
    return this.#size
  }

  /** The `index`-th line from the oldest. */
  row(index: number): number {
    return this.#rows[(this.#head + index) & this.#mask]!
  }

  text(index: number): string {
    return this.#texts[(this.#head + index) & this.#mask]!
  }

  bytes(index: number): number {
    return this.#bytes[(this.#head + index) & this.#mask]!
  }

  push(row: number, text: string, bytes: number): void {
    if (this.#size === this.#mask + 1) this.#grow()
    const at = (this.#head + this.#size) & this.#mask
    this.#rows[at] = row
    this.#texts[at] = text
    this.#bytes[at] = bytes
    this.#size++
  }

  /** Replace the text of the `index`-th line from the oldest. */
  set(index: number, text: string, bytes: number): void {
    const at = (this.#head + index) & this.#mask
    this.#texts[at] = text
    this.#bytes[at] = bytes
  }

  shift(): void {
    if (this.#size === 0) return
    this.#texts[this.#head] = ""
    this.#head = (this.#head + 1) & this.#mask
    this.#size--
  }

  clear(): void {
    this.#rows = NONE
    this.#bytes = NONE
    this.#texts = []
    this.#mask = -1
    this.#head = 0
    this.#size = 0
  }

  /** Double the ring (or make the first), its lines moved to the front in order. */
  #grow(): void {
    const capacity = Math.max(INITIAL, (this.#mask + 1) * 2)
    const rows = new Float64Array(capacity)
    const bytes = new Float64Array(capacity)
    const texts = new Array<string>(capacity).fill("")
    for (let i = 0; i < this.#size; i++) {
      const at = (this.#head + i) & this.#mask
      rows[i] = this.#rows[at]!
      bytes[i] = this.#bytes[at]!
      texts[i] = this.#texts[at]!
    }
    this.#rows = rows
    this.#bytes = bytes
    this.#texts = texts
    this.#mask = capacity - 1
    this.#head = 0
  }
}
