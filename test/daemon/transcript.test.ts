import { afterEach, describe, expect, it } from "@effect/vitest"
import { transcript } from "../support/transcript.js"
import { built, connectMcp, makeHome, startDaemon } from "./support.js"

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

describe.runIf(built)("the same tool transcript, in-process and through a real daemon", () => {
  it("gives the same model-facing results", async () => {
    const home = makeHome()
    cleanups.push(home.dispose)
    const local = await connectMcp(home.env, [])
    cleanups.push(() => local.client.close())
    const inProcess = await transcript(local)
    await local.client.close()

    const daemon = await startDaemon(home.env)
    cleanups.push(() => daemon.stop())
    const remote = await connectMcp(home.env, ["--daemon"])
    cleanups.push(() => remote.client.close())
    const throughDaemon = await transcript(remote)

    expect(inProcess.length).toBe(25)
    expect(throughDaemon).toEqual(inProcess)
    expect(inProcess.join("\n")).toContain("kept /usr")
    expect(inProcess.join("\n")).toContain("42")
    expect(inProcess.join("\n")).toContain("[wait: matched]")
  })
})
