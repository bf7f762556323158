import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { InvalidInput } from "../src/Errors.js"
import type { Dialect } from "../src/ShellDialect.js"
import { ShellDialect } from "../src/ShellDialect.js"
import * as ShellDialects from "../src/ShellDialects.js"

const dialect = (name: string, aliases?: ReadonlyArray<string>): Dialect => ({
  name,
  ...(aliases !== undefined ? { aliases } : {}),
  promptText: "$ ",
  launch: ({ shell }) => ({ file: shell, args: [], env: {} })
})

const registry = ShellDialects.make([dialect("bash"), dialect("zsh"), dialect("pwsh", ["powershell"])])

const resolved = (shell: string) =>
  Either.map(registry.resolve(shell), ({ dialect, file }) => ({ dialect: dialect.name, file }))

describe("ShellDialects", () => {
  it("a dialect's name, or a path whose basename names it, picks the dialect; the program is started as given", () => {
    expect(resolved("zsh")).toEqual(Either.right({ dialect: "zsh", file: "zsh" }))
    expect(resolved("/usr/bin/zsh")).toEqual(Either.right({ dialect: "zsh", file: "/usr/bin/zsh" }))
    expect(resolved(" /bin/bash ")).toEqual(Either.right({ dialect: "bash", file: "/bin/bash" }))
    expect(resolved("powershell")).toEqual(Either.right({ dialect: "pwsh", file: "powershell" }))
    expect(resolved("C:\\Program Files\\PowerShell\\7\\pwsh.exe")).toMatchObject(Either.right({ dialect: "pwsh" }))
  })

  it("a shell with no dialect is refused with InvalidInput naming the supported ones and the way around", () => {
    for (const shell of ["tcsh", "/bin/sh", "zsh5", "ZSH", "/usr/bin/"]) {
      const refused = registry.resolve(shell)
      expect(Either.isLeft(refused)).toBe(true)
      const error = Either.getLeft(refused).pipe((option) => option._tag === "Some" ? option.value : undefined)!
      expect(error).toBeInstanceOf(InvalidInput)
      expect(error.field).toBe("shell")
      if (shell === "/usr/bin/") {
        expect(error.message).toContain("names no shell")
        continue
      }
      expect(error.message).toContain("bash, zsh, pwsh")
      expect(error.message).toContain("type \"command\"")
      expect(error.message).toContain(JSON.stringify(shell))
    }
  })

  it.effect("layerFromDialect makes a registry of the one ShellDialect in the context", () =>
    Effect.gen(function*() {
      const dialects = yield* ShellDialects.ShellDialects
      expect(dialects.dialects.map((one) => one.name)).toEqual(["fish"])
      expect(Either.isRight(dialects.resolve("/usr/bin/fish"))).toBe(true)
    }).pipe(
      Effect.provide(ShellDialects.layerFromDialect.pipe(Layer.provide(Layer.succeed(ShellDialect, dialect("fish")))))
    ))
})
