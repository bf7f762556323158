/**
 * The few `/proc` reads the Linux inspector makes, behind an interface so the probe logic runs unchanged
 * against recorded fixtures. Every read returns its value or a `ProcError` carrying the errno code: nothing
 * throws.
 */
import * as fs from "node:fs"

/** A failed read, with its errno code (`ENOENT`, `EACCES`, `EIO`…). */
export interface ProcError {
  readonly _tag: "ProcError"
  readonly code: string
}

/** A value or the error that prevented reading it. */
export type ProcResult<A> = A | ProcError

/** The identity of an open file, as `stat(2)` reports it (device numbers in glibc `makedev` encoding). */
export interface FileId {
  readonly dev: bigint
  readonly ino: bigint
  readonly rdev: bigint
  readonly isCharDevice: boolean
}

/** The reads, with paths relative to the proc root (`"123/stat"`). */
export interface ProcFs {
  readonly readText: (path: string) => ProcResult<string>
  readonly list: (path: string) => ProcResult<ReadonlyArray<string>>
  /** `stat` of what `/proc/<pid>/fd/<fd>` points to. */
  readonly statFd: (pid: number, fd: number) => ProcResult<FileId>
  /** `stat` of an absolute path outside `/proc` (the pty slave). */
  readonly statPath: (path: string) => ProcResult<FileId>
  /** Where a `/proc` link points (`123/fd/4` → `socket:[5678]`); optional: absent, nothing is resolved. */
  readonly readLink?: ((path: string) => ProcResult<string>) | undefined
  /** Bytes of the process's memory (`/proc/<pid>/mem`); a short read is an `EIO`. */
  readonly readMemory: (pid: number, address: bigint, length: number) => ProcResult<Uint8Array>
  /**
   * `/proc/<pid>/stat` through a descriptor kept open for that process (optional): one `pread` instead of
   * open, read and close. It stays bound to the process it was opened for: once that process is gone it
   * reads `ESRCH`, even if its pid was given to another one. Closed by `unpin`, and on an error.
   */
  readonly readPinnedStat?: ((pid: number) => ProcResult<string>) | undefined
  readonly unpin?: ((pid: number) => void) | undefined
}

/** A `ProcError`, from a thrown node error or a code. */
export const procError = (cause: unknown): ProcError => ({
  _tag: "ProcError",
  code: typeof cause === "string"
    ? cause
    : typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string"
    ? cause.code
    : "EUNKNOWN"
})

/** Whether a read failed. */
export const isProcError = (u: unknown): u is ProcError =>
  typeof u === "object" && u !== null && "_tag" in u && u._tag === "ProcError"

const fileId = (stats: fs.BigIntStats): FileId => ({
  dev: stats.dev,
  ino: stats.ino,
  rdev: stats.rdev,
  isCharDevice: stats.isCharacterDevice()
})

/** The real `/proc` (or another root with the same layout). Holds one scratch buffer, so one per inspector. */
export const makeProcFs = (root = "/proc"): ProcFs => {
  let scratch = Buffer.allocUnsafe(16 * 1024)

  const readText = (path: string): ProcResult<string> => {
    let fd: number
    try {
      fd = fs.openSync(`${root}/${path}`, "r")
    } catch (cause) {
      return procError(cause)
    }
    try {
      let length = 0
      for (;;) {
        if (length === scratch.length) {
          const larger = Buffer.allocUnsafe(scratch.length * 2)
          scratch.copy(larger, 0, 0, length)
          scratch = larger
        }
        const n = fs.readSync(fd, scratch, length, scratch.length - length, null)
        if (n === 0) break
        length += n
      }
      return scratch.toString("latin1", 0, length)
    } catch (cause) {
      return procError(cause)
    } finally {
      try {
        fs.closeSync(fd)
      } catch {}
    }
  }

  const list = (path: string): ProcResult<ReadonlyArray<string>> => {
    try {
      return fs.readdirSync(`${root}/${path}`)
    } catch (cause) {
      return procError(cause)
    }
  }

  const statPath = (path: string): ProcResult<FileId> => {
    try {
      return fileId(fs.statSync(path, { bigint: true }))
    } catch (cause) {
      return procError(cause)
    }
  }

  const readMemory = (pid: number, address: bigint, length: number): ProcResult<Uint8Array> => {
    let fd: number
    try {
      fd = fs.openSync(`${root}/${pid}/mem`, "r")
    } catch (cause) {
      return procError(cause)
    }
    try {
      const out = Buffer.alloc(length)
      const n = length === 0 ? 0 : fs.readSync(fd, out, 0, length, address)
      return n === length ? out : procError("EIO")
    } catch (cause) {
      return procError(cause)
    } finally {
      try {
        fs.closeSync(fd)
      } catch {}
    }
  }

  const pinned = new Map<number, number>()
  const unpin = (pid: number) => {
    const fd = pinned.get(pid)
    if (fd === undefined) return
    pinned.delete(pid)
    try {
      fs.closeSync(fd)
    } catch {}
  }
  const readPinnedStat = (pid: number): ProcResult<string> => {
    let fd = pinned.get(pid)
    if (fd === undefined) {
      try {
        fd = fs.openSync(`${root}/${pid}/stat`, "r")
      } catch (cause) {
        return procError(cause)
      }
      pinned.set(pid, fd)
    }
    try {
      const n = fs.readSync(fd, scratch, 0, scratch.length, 0)
      return scratch.toString("latin1", 0, n)
    } catch (cause) {
      unpin(pid)
      return procError(cause)
    }
  }

  const readLink = (path: string): ProcResult<string> => {
    try {
      return fs.readlinkSync(`${root}/${path}`)
    } catch (cause) {
      return procError(cause)
    }
  }

  return {
    readPinnedStat,
    unpin,
    readLink,
    readText,
    list,
    statFd: (pid, fd) => statPath(`${root}/${pid}/fd/${fd}`),
    statPath,
    readMemory
  }
}
