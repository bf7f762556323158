/**
 * The environment policy against a real shell (SCENARIOS 34, 35), without a sandbox and inside one: the
 * host's credentials and injection variables never reach the session; the trusted mapping wins.
 */
import type { PtyService } from "@agent-terminal/core"
import { NodeTerminal } from "@agent-terminal/node"
import { expect, layer, type Vitest } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { owner, testConfig } from "../support/terminal.js"
import { makeWorkspace, openAs } from "./support.js"

const workspace = makeWorkspace("env")
const bashEnvFile = path.join(workspace, "bash_env.sh")
const nodeRequire = path.join(workspace, "evil.cjs")
const injectedMarker = path.join(workspace, "bash-env-ran")
fs.writeFileSync(bashEnvFile, `echo BASH_ENV-INJECTED; touch ${injectedMarker}\n`)
fs.writeFileSync(nodeRequire, "console.log('NODE_OPTIONS-INJECTED')\n")

const hostEnv = {
  ...process.env,
  FOO_TOKEN: "leaked-token",
  AWS_SECRET_ACCESS_KEY: "leaked-aws-secret",
  DB_PASSWORD: "leaked-db-password",
  DATABASE_URL: "postgres://app:leaked@db/app",
  KEEP_ME: "kept",
  LD_PRELOAD: "/nonexistent/agent-terminal-preload.so",
  BASH_ENV: bashEnvFile,
  NODE_OPTIONS: `--require ${nodeRequire}`,
  "BASH_FUNC_evil%%": "() {  echo EVIL-FUNCTION-INJECTED\n}"
}
const trustedEnv = { DB_PASSWORD: "trusted-db-password" }

const scenarios = (it: Vitest.MethodsNonLive<PtyService.PtyService, true>) => {
  it.scoped("credential-looking variables are absent; the trusted value wins (34)", () =>
    Effect.gen(function*() {
      const { send } = yield* openAs(owner)
      const seen = yield* send(
        "echo \"[${FOO_TOKEN-unset}] [${AWS_SECRET_ACCESS_KEY-unset}] [${DATABASE_URL-unset}] [$DB_PASSWORD] [$KEEP_ME]\""
      )
      expect(seen.output).toBe("[unset] [unset] [unset] [trusted-db-password] [kept]")
      const env = yield* send("env")
      expect(env.output).not.toContain("leaked")
    }))

  it.scoped("LD_PRELOAD, BASH_ENV, NODE_OPTIONS and BASH_FUNC_* from the host are dropped (35)", () =>
    Effect.gen(function*() {
      const { send } = yield* openAs(owner)
      const seen = yield* send("echo \"[${LD_PRELOAD-unset}] [${BASH_ENV-unset}] [${NODE_OPTIONS-unset}]\"")
      expect(seen.output).toBe("[unset] [unset] [unset]")
      const functions = yield* send("type evil; env | grep -c '^BASH_FUNC_'")
      expect(functions.output).toContain("evil: not found")
      expect(functions.output.split("\n").at(-1)).toBe("0")
      const children = yield* send("bash -c 'echo child-bash'; node -e 'console.log(\"child-node\")'; evil")
      expect(children.output).toContain("child-bash")
      expect(children.output).toContain("child-node")
      expect(children.output).not.toContain("INJECTED")
      expect(children.output).not.toContain("ld.so")
      expect(fs.existsSync(injectedMarker)).toBe(false)
    }))
}

layer(NodeTerminal.layer(testConfig, { hostEnv, trustedEnv }), { excludeTestServices: true })(
  "environment policy, no sandbox",
  scenarios
)

layer(
  NodeTerminal.layer(testConfig, { hostEnv, trustedEnv, sandbox: { mode: "workspace-write", workspace } }),
  { excludeTestServices: true }
)("environment policy, inside the workspace-write sandbox", scenarios)
