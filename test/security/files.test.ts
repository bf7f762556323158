/**
 * The files a confined session must not touch, performed as the attacks (issue #15, findings 4 and 5):
 * planting a git hook or `core.fsmonitor` in the workspace's repository (code that would run unconfined at
 * the user's next git command) is denied — `git commit` still works — also for a `.git` file pointing to a
 * git directory inside the workspace; and reading credentials under the home directory (a planted
 * `~/.ssh/id_test`, `~/.npmrc`, a symlinked `~/.aws`, the project's state directory, an extra path) finds
 * them empty. The home directory is a temporary one, outside the sandbox's private directories, so the real
 * one is never touched.
 */
import { Ids } from "@agent-terminal/core"
import { NodeTerminal } from "@agent-terminal/node"
import { afterAll, describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { testConfig } from "../support/terminal.js"
import { makeWorkspace, openAs, SandboxedTerminal } from "./support.js"

const git = (cwd: string, ...args: ReadonlyArray<string>) =>
  childProcess.execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
    cwd,
    stdio: "pipe",
    encoding: "utf8"
  })

const commitInside = "echo change >> file.txt && git add file.txt && " +
  "git -c user.name=t -c user.email=t@example.com commit -qm inside && git log --oneline | wc -l"

describe("git metadata in workspace-write", () => {
  const repo = makeWorkspace("git")
  git(repo, "init", "-q")
  fs.writeFileSync(path.join(repo, "file.txt"), "one\n")
  git(repo, "add", "file.txt")
  git(repo, "commit", "-qm", "first")
  const configBefore = fs.readFileSync(path.join(repo, ".git", "config"), "utf8")

  layer(SandboxedTerminal({ mode: "workspace-write", workspace: repo }), { excludeTestServices: true })(
    "a repository at the workspace root",
    (it) => {
      it.scoped("writing .git/hooks/pre-commit is denied; git commit works", () =>
        Effect.gen(function*() {
          const { send } = yield* openAs(Ids.OwnerId.make("git-hooks"))
          const plant = yield* send("echo 'touch /tmp/pwned' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit")
          expect(plant.output).toContain("Read-only file system")
          expect(fs.existsSync(path.join(repo, ".git", "hooks", "pre-commit"))).toBe(false)
          const commit = yield* send(commitInside)
          expect(commit.exitCode).toBe(0)
          expect(commit.output).toBe("2")
        }))

      it.scoped("core.fsmonitor and core.hooksPath cannot be set; .git cannot be moved away and replaced", () =>
        Effect.gen(function*() {
          const { send } = yield* openAs(Ids.OwnerId.make("git-config"))
          const fsmonitor = yield* send("git config core.fsmonitor 'touch /tmp/pwned'")
          expect(fsmonitor.exitCode).not.toBe(0)
          expect(fsmonitor.output).toMatch(/could not (lock|write) config file|Read-only file system/)
          expect((yield* send("echo '[core] hooksPath = /tmp' >> .git/config")).output).toContain(
            "Read-only file system"
          )
          const moved = yield* send("mv .git .git-old 2>&1; echo status $?")
          expect(moved.output).toContain("Device or resource busy")
          expect((yield* send("rm -rf .git/hooks 2>&1 | tail -1")).output).toMatch(/busy|Read-only/)
          expect(fs.readFileSync(path.join(repo, ".git", "config"), "utf8")).toBe(configBefore)
          expect(fs.existsSync(path.join(repo, ".git-old"))).toBe(false)
        }))
    }
  )

  const separate = makeWorkspace("git-separate")
  git(separate, "init", "-q", `--separate-git-dir=${path.join(separate, ".repo")}`)
  fs.writeFileSync(path.join(separate, "file.txt"), "one\n")
  git(separate, "add", "file.txt")
  git(separate, "commit", "-qm", "first")
  fs.rmSync(path.join(separate, ".repo", "hooks"), { recursive: true, force: true })

  layer(SandboxedTerminal({ mode: "workspace-write", workspace: separate }), { excludeTestServices: true })(
    "a .git file pointing to a git directory inside the workspace",
    (it) => {
      it.scoped("the .git file, the git directory's config and its (missing) hooks are read-only; commits work", () =>
        Effect.gen(function*() {
          const { send } = yield* openAs(Ids.OwnerId.make("git-separate"))
          expect((yield* send("echo 'gitdir: /tmp/evil' > .git")).output).toContain("Read-only file system")
          expect((yield* send("mkdir -p .repo/hooks && echo x > .repo/hooks/pre-commit")).output).toContain(
            "Read-only file system"
          )
          expect((yield* send("git config core.fsmonitor evil")).exitCode).not.toBe(0)
          const commit = yield* send(commitInside)
          expect(commit.exitCode).toBe(0)
          expect(commit.output).toBe("2")
          expect(fs.readFileSync(path.join(separate, ".git"), "utf8")).toContain(".repo")
          expect(fs.readdirSync(path.join(separate, ".repo", "hooks"))).toEqual([])
        }))
    }
  )
})

describe("the deny-read list", () => {
  fs.mkdirSync(path.join(process.cwd(), "build"), { recursive: true })
  const base = fs.mkdtempSync(path.join(process.cwd(), "build", "at-home-"))
  afterAll(() => fs.rmSync(base, { recursive: true, force: true }))
  const home = path.join(base, "home")
  const awsReal = path.join(base, "aws-real")
  const extra = path.join(base, "extra-secret.txt")
  const stateDir = path.join(home, ".agent-terminal")
  fs.mkdirSync(path.join(home, ".ssh"), { recursive: true })
  fs.writeFileSync(path.join(home, ".ssh", "id_test"), "-----BEGIN OPENSSH PRIVATE KEY----- planted\n")
  fs.writeFileSync(path.join(home, ".npmrc"), "//registry.npmjs.org/:_authToken=planted-npm-token\n")
  fs.mkdirSync(awsReal, { recursive: true })
  fs.writeFileSync(path.join(awsReal, "credentials"), "aws_secret_access_key = planted\n")
  fs.symlinkSync(awsReal, path.join(home, ".aws"))
  fs.mkdirSync(stateDir, { recursive: true })
  fs.writeFileSync(path.join(stateDir, "token"), "planted-http-token\n")
  fs.writeFileSync(extra, "planted-extra\n")
  fs.writeFileSync(path.join(home, "notes.txt"), "readable\n")

  const realHome = process.env.HOME
  process.env.HOME = home
  afterAll(() => {
    process.env.HOME = realHome
  })
  const workspace = makeWorkspace("deny")
  const sandbox = { workspace, stateDir, denyRead: [extra] }

  const scenarios = (mode: "read-only" | "workspace-write") =>
    layer(NodeTerminal.layer(testConfig, { sandbox: { ...sandbox, mode } }), { excludeTestServices: true })(
      `in ${mode}`,
      (it) => {
        it.scoped("a planted ~/.ssh/id_test, ~/.npmrc, a symlinked ~/.aws, the state directory and an extra path read as empty", () =>
          Effect.gen(function*() {
            const { send } = yield* openAs(Ids.OwnerId.make(`deny-${mode}`))
            expect((yield* send("echo $HOME")).output).toBe(home)
            const key = yield* send("cat ~/.ssh/id_test; ls -A ~/.ssh | wc -l")
            expect(key.output).toContain("No such file or directory")
            expect(key.output).not.toContain("planted")
            expect(key.output.split("\n").at(-1)).toBe("0")
            expect((yield* send("wc -c < ~/.npmrc")).output).toBe("0")
            const aws = yield* send(`cat ~/.aws/credentials ${awsReal}/credentials 2>&1`)
            expect(aws.output).not.toContain("planted")
            expect((yield* send(`ls -A ${stateDir} | wc -l`)).output).toBe("0")
            expect((yield* send(`cat ${extra} | wc -c`)).output).toBe("0")
            expect((yield* send("cat ~/notes.txt")).output).toBe("readable")
            const write = yield* send("echo x > ~/.ssh/authorized_keys")
            expect(write.output).toContain("Read-only file system")
            expect(fs.existsSync(path.join(home, ".ssh", "authorized_keys"))).toBe(false)
          }))
      }
    )
  scenarios("read-only")
  scenarios("workspace-write")

  layer(SandboxedTerminal({ mode: "workspace-write", workspace: home, stateDir }), { excludeTestServices: true })(
    "the home directory as the writable workspace",
    (it) => {
      it.scoped("~/.ssh is still masked (the masks cover the workspace's bind)", () =>
        Effect.gen(function*() {
          const { send } = yield* openAs(Ids.OwnerId.make("deny-home-workspace"))
          expect((yield* send("cat ~/.ssh/id_test 2>&1")).output).toContain("No such file or directory")
          expect((yield* send("echo ok > ~/written.txt && cat ~/written.txt")).output).toBe("ok")
        }))
    }
  )

  const rootNpmrc = fs.existsSync("/root/.npmrc") && typeof process.getuid === "function" && process.getuid() === 0
  layer(SandboxedTerminal({ mode: "read-only", workspace }), { excludeTestServices: true })(
    "root's home",
    (it) => {
      it.scoped.skipIf(!rootNpmrc)(
        `/root/.npmrc reads as empty when the server runs as root${
          rootNpmrc ? "" : " (skipped: not root, or no /root/.npmrc)"
        }`,
        () =>
          Effect.gen(function*() {
            const { send } = yield* openAs(Ids.OwnerId.make("deny-root"))
            expect((yield* send("wc -c < /root/.npmrc")).output).toBe("0")
          })
      )
    }
  )
})
