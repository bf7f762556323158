/**
 * The listeners' attempt list (docs/security.md): each attack test records what it tried and what came
 * back, and writes its rows to `build/listener-attempts/<name>.md` once its file is done; the docs' table is
 * those files, pasted as they are (the sandbox's list is written the same way by
 * test/security/attempts.test.ts).
 */
import { afterAll } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"

const cell = (text: string) => text.replace(/\r?\n/g, " ⏎ ").replace(/\|/g, "\\|").slice(0, 200)

/** A recorder for one test file: `record(surface, attempt, result, refused)`; written after the file's tests. */
export const attemptLog = (name: string) => {
  const rows: Array<string> = []
  afterAll(() => {
    if (rows.length === 0) return
    const dir = path.resolve(__dirname, "../../build/listener-attempts")
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(path.join(dir, `${name}.md`), `${rows.join("\n")}\n`)
  })
  return (surface: string, attempt: string, result: string, refused: boolean) => {
    rows.push(`| ${cell(surface)} | ${cell(attempt)} | ${cell(result)} | ${refused ? "**refused**" : "allowed"} |`)
  }
}
