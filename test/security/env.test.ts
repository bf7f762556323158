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

const finding9 = {
  GITHUB_PAT: "leaked-pat",
  GH_PAT: "leaked-pat",
  MYSQL_PWD: "leaked-pwd",
  BW_SESSION: "leaked-session",
  OP_SESSION_team: "leaked-session",
  CI_JOB_JWT: "leaked-jwt",
  SENTRY_DSN: "https://leaked@o1.ingest.sentry.io/1",
  SLACK_WEBHOOK_URL: "https://hooks.slack.com/services/leaked",
  REPO_REMOTE: "https://ghp_leaked@github.com/org/repo.git",
  GIT_TEMPLATE_DIR: "/nonexistent/leaked-templates",
  GIT_DIR: "/nonexistent/leaked-git",
  GIT_SEQUENCE_EDITOR: "leaked-editor",
  EDITOR: "leaked-editor",
  VISUAL: "leaked-editor",
  MANPAGER: "leaked-pager",
  PYTHONWARNINGS: "leaked",
  PYTHONUSERBASE: "/nonexistent/leaked",
  CLASSPATH: "/nonexistent/leaked.jar",
  DOTNET_STARTUP_HOOKS: "/nonexistent/leaked.dll",
  ELECTRON_RUN_AS_NODE: "1leaked",
  OPENSSL_CONF: "/nonexistent/leaked.cnf",
  LUA_INIT: "leaked",
  VIMINIT: "leaked",
  RUSTC_WRAPPER: "leaked",
  HOSTALIASES: "/nonexistent/leaked",
  RES_OPTIONS: "leaked",
  BASH_LOADABLES_PATH: "/nonexistent/leaked",
  KUBECONFIG: "/nonexistent/leaked-kube",
  DOCKER_HOST: "tcp://leaked:2375",
  DBUS_SESSION_BUS_ADDRESS: "unix:path=/run/user/0/leaked-bus",
  XAUTHORITY: "/nonexistent/leaked-xauth",
  KRB5CCNAME: "FILE:/tmp/leaked-krb5cc"
}
const hostEnv = {
  ...process.env,
  ...finding9,
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

  it.scoped("the gaps of issue #15 finding 9 are closed: none of its credentials, injections or pointers arrive", () =>
    Effect.gen(function*() {
      const { send } = yield* openAs(owner)
      const env = yield* send("env | cut -d= -f1 | sort")
      const names = env.output.split("\n")
      for (const name of Object.keys(finding9)) expect(names, name).not.toContain(name)
      expect((yield* send("env | grep -c leaked")).output).toBe("0")
      expect(names).toContain("PWD")
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
