/**
 * What a service holds per owner, by id: the live entries (sessions, runs, tasks), and a bounded memory of
 * the ids it removed and whose they were (tombstones), so that removing twice is not an error and an owner
 * can tell "already gone" from "never yours". Ids are minted here, fresh: never one that is live or
 * remembered. The seam where a service's registry moves elsewhere (a daemon's, a database's).
 *
 * @since 0.2.0
 */
import type { OwnerId } from "./Ids.js"

/**
 * What a lookup by id found, for the owner that asked.
 *
 * - `Live`: the owner's live entry.
 * - `Foreign`: another owner's entry, live or removed (never shown).
 * - `Gone`: the owner's, removed and remembered.
 * - `Unknown`: no such id (never minted, or forgotten).
 *
 * @since 0.2.0
 */
export type Found<V> =
  | { readonly _tag: "Live"; readonly entry: V }
  | { readonly _tag: "Foreign" }
  | { readonly _tag: "Gone" }
  | { readonly _tag: "Unknown" }

const foreign = { _tag: "Foreign" } as const
const gone = { _tag: "Gone" } as const
const unknown = { _tag: "Unknown" } as const

/**
 * How many fresh ids `mint` tries before it gives up (each one of ≥ 96 random bits: a collision is a broken
 * random source, not bad luck).
 *
 * @since 0.2.0
 */
export const MINT_ATTEMPTS = 8

/**
 * An owner-scoped registry with bounded tombstones.
 *
 * @since 0.2.0
 */
export class Registry<K extends string, V> {
  readonly #live = new Map<K, V>()
  readonly #removed = new Map<K, OwnerId>()

  /**
   * @param ownerOf whose an entry is
   * @param tombstones how many removed ids are remembered (the oldest are forgotten first)
   */
  constructor(readonly ownerOf: (entry: V) => OwnerId, readonly tombstones = 1024) {}

  /** How many entries are live, every owner's together. */
  get size(): number {
    return this.#live.size
  }

  /** The live entry with this id, whoever owns it. */
  get(id: K): V | undefined {
    return this.#live.get(id)
  }

  /** What `owner` may know of `id`. */
  find(owner: OwnerId, id: K): Found<V> {
    const entry = this.#live.get(id)
    if (entry !== undefined) return this.ownerOf(entry) === owner ? { _tag: "Live", entry } : foreign
    const previous = this.#removed.get(id)
    if (previous === undefined) return unknown
    return previous === owner ? gone : foreign
  }

  /** Add or replace a live entry. */
  set(id: K, entry: V): void {
    this.#live.set(id, entry)
  }

  /** Remove a live entry and remember whose it was. */
  remove(id: K): void {
    const entry = this.#live.get(id)
    if (entry === undefined) return
    this.#live.delete(id)
    this.remember(id, this.ownerOf(entry))
  }

  /** Remember that `owner`'s `id` was removed (an entry this registry never held, such as another service's). */
  remember(id: K, owner: OwnerId): void {
    if (this.tombstones === 0) return
    this.#removed.delete(id)
    this.#removed.set(id, owner)
    if (this.#removed.size > this.tombstones) this.#removed.delete(this.#removed.keys().next().value!)
  }

  /** Drop a live entry that never existed for anyone (a start that failed): nothing is remembered. */
  discard(id: K): void {
    this.#live.delete(id)
  }

  /** `owner`'s live entries, oldest first. */
  ownedBy(owner: OwnerId): Array<V> {
    const mine: Array<V> = []
    for (const entry of this.#live.values()) if (this.ownerOf(entry) === owner) mine.push(entry)
    return mine
  }

  /** How many of `owner`'s live entries count (all, unless `counts` says otherwise). */
  countOf(owner: OwnerId, counts?: (entry: V) => boolean): number {
    let count = 0
    for (const entry of this.#live.values()) {
      if (this.ownerOf(entry) === owner && (counts === undefined || counts(entry))) count++
    }
    return count
  }

  /** Every live entry with its id, oldest first. */
  entries(): Array<readonly [K, V]> {
    return [...this.#live.entries()]
  }

  /** Every live entry, oldest first. */
  values(): Array<V> {
    return [...this.#live.values()]
  }

  /** Forget every live entry (a service's end). */
  clear(): void {
    this.#live.clear()
  }

  /**
   * A fresh id from `make` (which draws ≥ 96 random bits): one no live entry has and no tombstone holds;
   * `undefined` after `MINT_ATTEMPTS` collisions in a row.
   */
  mint(make: () => K): K | undefined {
    for (let attempt = 0; attempt < MINT_ATTEMPTS; attempt++) {
      const id = make()
      if (!this.#live.has(id) && !this.#removed.has(id)) return id
    }
    return undefined
  }
}
