import { describe, expect, it } from "@effect/vitest"
import * as EnvPolicy from "../src/EnvPolicy.js"

const host = {
  PATH: "/usr/local/bin:/usr/bin:/bin",
  HOME: "/home/dev",
  LANG: "C.UTF-8",
  GIT_AUTHOR_NAME: "Dev",
  FOO_TOKEN: "t0k3n",
  AWS_SECRET_ACCESS_KEY: "aws-secret",
  AWS_ACCESS_KEY_ID: "AKIA...",
  DB_PASSWORD: "hunter2",
  github_token: "lowercase",
  MY_PASSPHRASE: "pass",
  GOOGLE_APPLICATION_CREDENTIALS: "/keys/sa.json",
  SSH_AUTH_SOCK: "/tmp/ssh-agent.sock",
  DATABASE_URL: "postgres://app:s3cret@db:5432/app",
  PUBLIC_URL: "https://example.com/path",
  LD_PRELOAD: "/tmp/evil.so",
  LD_LIBRARY_PATH: "/tmp/lib",
  DYLD_INSERT_LIBRARIES: "/tmp/evil.dylib",
  BASH_ENV: "/tmp/evil.sh",
  ENV: "/tmp/evil.sh",
  "BASH_FUNC_ls%%": "() { echo pwned; }",
  NODE_OPTIONS: "--require /tmp/evil.js",
  PYTHONSTARTUP: "/tmp/evil.py",
  PROMPT_COMMAND: "curl evil",
  GIT_SSH_COMMAND: "evil",
  GIT_CONFIG_GLOBAL: "/tmp/evil.gitconfig",
  PAGER: "less",
  TERM: "dumb",
  UNSET: undefined
}

describe("EnvPolicy", () => {
  it("drops names that look like credentials, in any case", () => {
    for (const name of ["FOO_TOKEN", "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "DB_PASSWORD", "github_token"]) {
      expect(EnvPolicy.dropReason(name), name).toBe("credential")
    }
    expect(EnvPolicy.dropReason("MY_PASSPHRASE")).toBe("credential")
    expect(EnvPolicy.dropReason("GOOGLE_APPLICATION_CREDENTIALS")).toBe("credential")
    expect(EnvPolicy.dropReason("SSH_AUTH_SOCK")).toBe("credential")
  })

  it("keeps ordinary names, including ones that merely contain AUTH inside a word", () => {
    for (
      const name of [
        "PATH",
        "HOME",
        "LANG",
        "GIT_AUTHOR_NAME",
        "PUBLIC_URL",
        "PWD",
        "OLDPWD",
        "XDG_SESSION_TYPE",
        "XDG_SESSION_ID",
        "DESKTOP_SESSION",
        "PATHEXT",
        "TERM_PROGRAM"
      ]
    ) {
      expect(EnvPolicy.dropReason(name, "x"), name).toBeUndefined()
    }
  })

  it("drops the credentials of finding 9: *_PAT, *PWD, *SESSION*, *_JWT, *_DSN, *WEBHOOK*", () => {
    for (
      const name of [
        "GITHUB_PAT",
        "GH_PAT",
        "MYSQL_PWD",
        "BW_SESSION",
        "OP_SESSION_my_team",
        "CI_JOB_JWT",
        "SENTRY_DSN",
        "SLACK_WEBHOOK_URL",
        "DISCORD_WEBHOOK"
      ]
    ) {
      expect(EnvPolicy.dropReason(name, "value"), name).toBe("credential")
    }
  })

  it("drops pointers to credentials and privileged sockets", () => {
    for (const name of ["KUBECONFIG", "DOCKER_HOST", "DOCKER_CONFIG", "DBUS_SESSION_BUS_ADDRESS", "XAUTHORITY"]) {
      expect(EnvPolicy.dropReason(name, "/somewhere"), name).toBe("credential")
    }
    expect(EnvPolicy.dropReason("KRB5CCNAME", "FILE:/tmp/krb5cc_1000")).toBe("credential")
  })

  it("drops a URL carrying user information — a password, or a token as the user — whatever its name", () => {
    expect(EnvPolicy.dropReason("DATABASE_URL", "postgres://app:s3cret@db:5432/app")).toBe("credential-url")
    expect(EnvPolicy.dropReason("REPO", "https://ghp_x@github.com/org/repo.git")).toBe("credential-url")
    expect(EnvPolicy.dropReason("PUBLIC_URL", "https://user@example.com/")).toBe("credential-url")
    expect(EnvPolicy.dropReason("PUBLIC_URL", "https://example.com/path")).toBeUndefined()
    expect(EnvPolicy.dropReason("PUBLIC_URL", "https://example.com/a@b")).toBeUndefined()
    expect(EnvPolicy.dropReason("GIT_REMOTE", "git@github.com:org/repo.git")).toBeUndefined()
  })

  it("drops loader and injection variables", () => {
    for (
      const name of [
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "DYLD_INSERT_LIBRARIES",
        "BASH_ENV",
        "ENV",
        "BASH_FUNC_ls%%",
        "NODE_OPTIONS",
        "PYTHONSTARTUP",
        "PROMPT_COMMAND",
        "GIT_SSH_COMMAND",
        "GIT_CONFIG_GLOBAL",
        "node_options",
        "GIT_TEMPLATE_DIR",
        "GIT_DIR",
        "GIT_SEQUENCE_EDITOR",
        "EDITOR",
        "VISUAL",
        "MANPAGER",
        "PYTHONWARNINGS",
        "PYTHONUSERBASE",
        "MAVEN_OPTS",
        "GRADLE_OPTS",
        "CLASSPATH",
        "DOTNET_STARTUP_HOOKS",
        "CORECLR_PROFILER",
        "CORECLR_PROFILER_PATH",
        "ELECTRON_RUN_AS_NODE",
        "OPENSSL_CONF",
        "LUA_INIT",
        "LUA_INIT_5_4",
        "VIMINIT",
        "EXINIT",
        "PHP_INI_SCAN_DIR",
        "RUSTC_WRAPPER",
        "HOSTALIASES",
        "RES_OPTIONS",
        "BASH_LOADABLES_PATH"
      ]
    ) {
      expect(EnvPolicy.dropReason(name), name).toBe("injection")
    }
  })

  it("builds: cleaned host, then the non-interactive defaults, then the trusted mapping", () => {
    const env = EnvPolicy.build({ host, trusted: { DB_PASSWORD: "trusted", PATH: "/opt/bin:/usr/bin" } })
    expect(env).toEqual({
      PATH: "/opt/bin:/usr/bin",
      HOME: "/home/dev",
      LANG: "C.UTF-8",
      GIT_AUTHOR_NAME: "Dev",
      PUBLIC_URL: "https://example.com/path",
      DB_PASSWORD: "trusted",
      ...EnvPolicy.nonInteractiveDefaults
    })
    expect(env.PAGER).toBe("cat")
    expect(env.TERM).toBe("xterm-256color")
  })

  it("the trusted mapping wins over the defaults; the shell integration wins over everything", () => {
    const env = EnvPolicy.build({
      host: { PROMPT_COMMAND: "from-host", PAGER: "less" },
      trusted: { PAGER: "more", PROMPT_COMMAND: "from-app" },
      integration: { PROMPT_COMMAND: "eval \"$AGENT_TERMINAL_INIT\"" }
    })
    expect(env.PAGER).toBe("more")
    expect(env.PROMPT_COMMAND).toBe("eval \"$AGENT_TERMINAL_INIT\"")
  })

  it("lists what it drops by name and reason, never the values", () => {
    const dropped = EnvPolicy.dropped(host)
    expect(dropped).toContainEqual({ name: "FOO_TOKEN", reason: "credential" })
    expect(dropped).toContainEqual({ name: "DATABASE_URL", reason: "credential-url" })
    expect(dropped).toContainEqual({ name: "BASH_FUNC_ls%%", reason: "injection" })
    expect(JSON.stringify(dropped)).not.toContain("hunter2")
    expect(dropped.map((d) => d.name)).not.toContain("UNSET")
  })
})
