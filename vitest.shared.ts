import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { ViteUserConfig } from "vitest/config"

const root = path.dirname(fileURLToPath(import.meta.url))

const alias = (name: string, dir: string) => ({
  [`@agent-terminal/${name}`]: path.join(root, dir, "src/index.ts")
})

/** Shared vitest settings: workspace packages resolve to their sources, so tests need no build. */
export const shared: ViteUserConfig = {
  resolve: {
    alias: {
      ...alias("terminal", "packages/terminal"),
      ...alias("core", "packages/core"),
      ...alias("node", "packages/node"),
      ...alias("tools", "packages/tools"),
      ...alias("server", "packages/server"),
      ...alias("daemon", "packages/daemon"),
      ...alias("fleet", "packages/fleet")
    }
  },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    globalSetup: [path.join(root, "test/setup/leakCheck.ts")]
  }
}
