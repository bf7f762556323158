import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { HttpToken } from "../src/index.js"

const scratch = () => fs.mkdtempSync(path.join(os.tmpdir(), "at-token-"))

describe("HttpToken.load", () => {
  it.effect("creates the default file with 256 random bits, 0600 in a new 0700 directory, then reuses it", () =>
    Effect.gen(function*() {
      const root = scratch()
      const stateDir = path.join(root, "state")
      const first = yield* HttpToken.load({ stateDir })
      const file = path.join(stateDir, "token")
      expect(first.source).toEqual({ _tag: "File", path: file, created: true })
      expect(Redacted.value(first.token)).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(fs.statSync(file).mode & 0o777).toBe(0o600)
      expect(fs.statSync(stateDir).mode & 0o777).toBe(0o700)
      expect(fs.readdirSync(stateDir)).toEqual(["token"])
      const second = yield* HttpToken.load({ stateDir })
      expect(second.source).toEqual({ _tag: "File", path: file, created: false })
      expect(Redacted.value(second.token)).toBe(Redacted.value(first.token))
      expect(HttpToken.describe(first.source)).toContain(file)
      expect(HttpToken.describe(first.source)).not.toContain(Redacted.value(first.token))
      expect(String(first.token)).not.toContain(Redacted.value(first.token))
      fs.rmSync(root, { recursive: true, force: true })
    }))

  it.effect("takes a token given directly, refuses one too short, and refuses a token and a file together", () =>
    Effect.gen(function*() {
      const given = "g".repeat(40)
      const loaded = yield* HttpToken.load({ token: given })
      expect(Redacted.value(loaded.token)).toBe(given)
      expect(loaded.source).toEqual({ _tag: "Environment", variable: "AGENT_TERMINAL_TOKEN" })
      expect((yield* Effect.flip(HttpToken.load({ token: "short" }))).message).toContain("too short")
      expect((yield* Effect.flip(HttpToken.load({ token: given, file: "/tmp/x" }))).message).toContain("not both")
      expect((yield* Effect.flip(HttpToken.load({ token: `${given} x` }))).message).toContain("whitespace")
    }))

  it.effect("refuses a token file other users can read, a directory others can write, and a symlink", () =>
    Effect.gen(function*() {
      const root = scratch()
      const file = path.join(root, "token")
      fs.writeFileSync(file, `${"k".repeat(43)}\n`, { mode: 0o644 })
      expect((yield* Effect.flip(HttpToken.load({ file }))).message).toContain("accessible to other users")
      fs.chmodSync(file, 0o600)
      expect(Redacted.value((yield* HttpToken.load({ file })).token)).toBe("k".repeat(43))
      const open = path.join(root, "open")
      fs.mkdirSync(open, { mode: 0o777 })
      fs.chmodSync(open, 0o777)
      expect((yield* Effect.flip(HttpToken.load({ file: path.join(open, "token") }))).message).toContain(
        "accessible to other users"
      )
      const link = path.join(root, "link")
      fs.symlinkSync(file, link)
      expect((yield* Effect.flip(HttpToken.load({ file: link }))).message).toContain("not a regular file")
      fs.rmSync(root, { recursive: true, force: true })
    }))
})
