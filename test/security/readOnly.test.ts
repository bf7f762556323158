/**
 * The bubblewrap sandbox in `read-only`, against real bwrap: everything is readable, every write fails —
 * the workspace, /tmp, /etc, the home directory, /dev/shm — and nothing reaches the host.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { owner } from "../support/terminal.js"
import { makeWorkspace, openAs, SandboxedTerminal } from "./support.js"

const workspace = makeWorkspace("ro")
fs.writeFileSync(path.join(workspace, "readme.txt"), "readable\n")

layer(SandboxedTerminal({ mode: "read-only", workspace }), { excludeTestServices: true })(
  "read-only sandbox (bubblewrap)",
  (it) => {
    it.scoped("reads the workspace and the host's files", () =>
      Effect.gen(function*() {
        const { opened, send } = yield* openAs(owner)
        expect(opened.cwd).toBe(workspace)
        expect((yield* send("cat readme.txt")).output).toBe("readable")
        const passwd = yield* send("head -1 /etc/passwd")
        expect(passwd.exitCode).toBe(0)
        expect(passwd.output).toMatch(/^root:/)
      }))

    it.scoped("every write fails: workspace, /tmp, /etc, home, /dev/shm, a new directory", () =>
      Effect.gen(function*() {
        const { send } = yield* openAs(owner)
        const targets = [
          path.join(workspace, "new.txt"),
          path.join(workspace, "readme.txt"),
          "/tmp/agent-terminal-ro",
          "/etc/agent-terminal-ro",
          path.join(os.homedir(), "agent-terminal-ro"),
          "/dev/shm/agent-terminal-ro"
        ]
        for (const target of targets) {
          const attempt = yield* send(`echo x >> ${target}`)
          expect(attempt.exitCode, target).not.toBe(0)
          expect(attempt.output, target).toContain("Read-only file system")
        }
        const mkdir = yield* send(`mkdir ${path.join(workspace, "dir")}`)
        expect(mkdir.exitCode).not.toBe(0)
        expect(fs.readFileSync(path.join(workspace, "readme.txt"), "utf8")).toBe("readable\n")
        expect(fs.readdirSync(workspace)).toEqual(["readme.txt"])
        expect(fs.existsSync("/etc/agent-terminal-ro")).toBe(false)
      }))

    it.scoped("kernel settings stay read-only even for root inside", () =>
      Effect.gen(function*() {
        const { send } = yield* openAs(owner)
        const sysctl = yield* send("echo 0 > /proc/sys/kernel/core_uses_pid")
        expect(sysctl.exitCode).not.toBe(0)
        expect(sysctl.output).toContain("Read-only file system")
        const remount = yield* send("mount -o remount,rw / 2>&1; echo status $?")
        expect(remount.output).not.toContain("status 0")
        const caps = yield* send("grep CapEff /proc/self/status")
        expect(caps.output).toMatch(/CapEff:\s+0+$/)
      }))

    it.scoped("/proc/irq, /proc/bus and /proc/fs are read-only, also for root inside", () =>
      Effect.gen(function*() {
        const { send } = yield* openAs(owner)
        const before = fs.readFileSync("/proc/irq/default_smp_affinity", "utf8")
        const irq = yield* send("cat /proc/irq/default_smp_affinity > /proc/irq/default_smp_affinity")
        expect(irq.exitCode).not.toBe(0)
        expect(irq.output).toContain("Read-only file system")
        expect(fs.readFileSync("/proc/irq/default_smp_affinity", "utf8")).toBe(before)
        const mounts = yield* send(
          "awk '($5 == \"/proc/irq\" || $5 == \"/proc/bus\" || $5 == \"/proc/fs\") && $6 ~ /^ro/ { print $5 }' " +
            "/proc/self/mountinfo | sort -u | wc -l"
        )
        expect(mounts.output).toBe("3")
      }))

    it.scoped("writing to the terminal and to /dev/null still works", () =>
      Effect.gen(function*() {
        const { send } = yield* openAs(owner)
        const result = yield* send("echo quiet > /dev/null && echo loud > /dev/tty")
        expect(result.exitCode).toBe(0)
        expect(result.output).toBe("loud")
      }))
  }
)
