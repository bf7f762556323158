/**
 * A `ProcFs` over a recorded fixture: `fixtures/proc/<name>/proc/...` holds the texts read from `/proc`,
 * `scenario.json` the rest (file identities, memory, errors, the probe recorded live). An overlay replaces
 * texts or injects errors, to derive the cases that cannot be recorded on demand.
 */
import type { ProcessInspector } from "@agent-terminal/core"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { FileId, ProcFs, ProcResult } from "../../src/internal/proc/procFs.js"
import { procError } from "../../src/internal/proc/procFs.js"

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "proc")

interface FileIdJson {
  readonly dev: string
  readonly ino: string
  readonly rdev: string
  readonly isCharDevice: boolean
}

export interface Scenario {
  readonly description: string
  readonly command: string
  readonly arch: "x64"
  readonly terminal: { readonly shellPid: number; readonly ttyPath: string }
  readonly expected: { readonly probe: ProcessInspector.Probe; readonly how?: string }
  readonly paths: Record<string, FileIdJson | string>
  readonly fds: Record<string, FileIdJson | string>
  readonly memory: Record<string, ReadonlyArray<{ readonly address: string; readonly hex: string }>>
  readonly errors: Record<string, string>
}

export interface Overlay {
  /** Replaced texts, by path relative to `/proc`. */
  readonly texts?: Record<string, string>
  /** Injected errno codes, by path relative to `/proc`; `<pid>/mem` fails every memory read of the pid. */
  readonly errors?: Record<string, string>
  /** Replaced descriptor identities (`<pid>/<fd>`), or errno codes. */
  readonly fds?: Record<string, FileIdJson | string>
}

export const fixtureNames = (): Array<string> => fs.readdirSync(root).filter((name) => !name.includes("."))

const toFileId = (json: FileIdJson | string | undefined): ProcResult<FileId> =>
  json === undefined
    ? procError("ENOENT")
    : typeof json === "string"
    ? procError(json)
    : { dev: BigInt(json.dev), ino: BigInt(json.ino), rdev: BigInt(json.rdev), isCharDevice: json.isCharDevice }

export const loadScenario = (name: string): Scenario =>
  JSON.parse(fs.readFileSync(path.join(root, name, "scenario.json"), "utf8"))

export const fixture = (name: string, overlay: Overlay = {}): { scenario: Scenario; procFs: ProcFs } => {
  const scenario = loadScenario(name)
  const dir = path.join(root, name, "proc")
  const errorOf = (key: string): string | undefined => overlay.errors?.[key] ?? scenario.errors[key]
  const procFs: ProcFs = {
    readText: (p) => {
      const error = errorOf(p)
      if (error !== undefined) return procError(error)
      const text = overlay.texts?.[p]
      if (text !== undefined) return text
      try {
        return fs.readFileSync(path.join(dir, p), "latin1")
      } catch {
        return procError("ENOENT")
      }
    },
    list: (p) => {
      const error = errorOf(p)
      if (error !== undefined) return procError(error)
      try {
        return fs.readdirSync(path.join(dir, p))
      } catch {
        return procError("ENOENT")
      }
    },
    statFd: (pid, fd) => toFileId(overlay.fds?.[`${pid}/${fd}`] ?? scenario.fds[`${pid}/${fd}`]),
    statPath: (p) => toFileId(scenario.paths[p]),
    readMemory: (pid, address, length) => {
      const error = errorOf(`${pid}/mem`) ?? errorOf(`${pid}/mem@0x${address.toString(16)}`)
      if (error !== undefined) return procError(error)
      for (const region of scenario.memory[String(pid)] ?? []) {
        const start = BigInt(region.address)
        const bytes = Buffer.from(region.hex, "hex")
        if (address >= start && address + BigInt(length) <= start + BigInt(bytes.length)) {
          const offset = Number(address - start)
          return bytes.subarray(offset, offset + length)
        }
      }
      return procError("EIO")
    }
  }
  return { scenario, procFs }
}
