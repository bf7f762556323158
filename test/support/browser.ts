import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type BrowserContext, chromium, type Page } from "playwright-core"

/** Debian's chromium (`.ci/run` installs it: scripts/system-packages.json). */
export const chromiumPath = "/usr/bin/chromium"

export const hasChromium = fs.existsSync(chromiumPath)

/** The flags a machine without network needs (nothing phones home, no sandbox as root). */
const flags = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
  "--disable-quic",
  "--disable-sync",
  "--disable-dev-shm-usage"
]

/** A headless chromium with a fresh profile; `close` ends it and removes the profile. */
export const launch = async (): Promise<{ context: BrowserContext; close: () => Promise<void> }> => {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "at-chromium-"))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: flags,
    viewport: { width: 1400, height: 860 }
  })
  return {
    context,
    close: async () => {
      await context.close()
      fs.rmSync(profile, { recursive: true, force: true })
    }
  }
}

/** The text of a browser terminal's buffer (`window[name]`, an xterm.js Terminal), all its lines. */
export const terminalText = (page: Page, name: "liveTerm" | "replayTerm" = "liveTerm"): Promise<string> =>
  page.evaluate((name) => {
    const term = (globalThis as any)[name]
    if (term === undefined) return ""
    const buffer = term.buffer.active
    const lines: Array<string> = []
    for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i)?.translateToString(true) ?? "")
    return lines.join("\n")
  }, name)

/** Wait until the browser terminal shows `text`. */
export const waitForText = async (page: Page, text: string, name: "liveTerm" | "replayTerm" = "liveTerm") => {
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    if ((await terminalText(page, name)).includes(text)) return
    await page.waitForTimeout(50)
  }
  throw new Error(`the page's terminal never showed ${JSON.stringify(text)}:\n${await terminalText(page, name)}`)
}
