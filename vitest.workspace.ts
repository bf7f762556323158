import * as path from "node:path"
import { mergeConfig } from "vitest/config"
import { shared } from "./vitest.shared.js"

const project = (dir: string, name: string, include = ["test/**/*.test.ts"]) =>
  mergeConfig(shared, { root: path.resolve(dir), test: { name, include } })

export default [
  project("packages/terminal", "terminal"),
  project("packages/core", "core"),
  project("packages/node", "node"),
  project("packages/tools", "tools"),
  project("packages/server", "server"),
  project("packages/daemon", "daemon"),
  project("packages/fleet", "fleet"),
  project("apps/cli", "cli"),
  project("apps/bench", "bench"),
  project("test", "integration", ["**/*.test.ts"])
]
