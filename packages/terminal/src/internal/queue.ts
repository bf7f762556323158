/**
 * A FIFO of lines (row, text, UTF-8 bytes) in parallel arrays with a moving head: no object per line,
 * so holding tens of thousands of lines costs the garbage collector nothing but the strings.
 */
export class LineQueue {
  #rows: Array<number> = []
  #texts: Array<string> = []
  #bytes: Array<number> = []
  #head = 0

  get size(): number {
    return this.#rows.length - this.#head
  }

  /** The `index`-th line from the oldest. */
  row(index: number): number {
    return this.#rows[this.#head + index]!
  }

  text(index: number): string {
    return this.#texts[this.#head + index]!
  }

  bytes(index: number): number {
    return this.#bytes[this.#head + index]!
  }

  push(row: number, text: string, bytes: number): void {
    this.#rows.push(row)
    this.#texts.push(text)
    this.#bytes.push(bytes)
  }

  /** Replace the text of the `index`-th line from the oldest. */
  set(index: number, text: string, bytes: number): void {
    this.#texts[this.#head + index] = text
    this.#bytes[this.#head + index] = bytes
  }

  shift(): void {
    if (this.size === 0) return
    this.#texts[this.#head] = ""
    this.#head++
    if (this.#head >= 1024 && this.#head * 2 >= this.#rows.length) {
      this.#rows = this.#rows.slice(this.#head)
      this.#texts = this.#texts.slice(this.#head)
      this.#bytes = this.#bytes.slice(this.#head)
      this.#head = 0
    }
  }

  clear(): void {
    this.#rows = []
    this.#texts = []
    this.#bytes = []
    this.#head = 0
  }
}
