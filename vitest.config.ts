import { defineConfig } from "vitest/config"

/**
 * Root settings for the whole run (the projects are in vitest.workspace.ts): besides the console report,
 * a JSON report that `.ci/run` summarises as one plain `N passed, N failed` line.
 */
export default defineConfig({
  test: {
    reporters: ["default", ["json", { outputFile: "build/test-report.json" }]]
  }
})
