/**
 * The seccomp filter inside real bubblewrap, performed as the attacks (issue #15, finding 6): pushing input
 * into the terminal with TIOCSTI (from python, and through the i386 ABI with `int 0x80`), making a user
 * namespace, reaching the kernel keyring — each EPERM; while threads (glibc tries clone3 first), child
 * processes and gdb (ptrace) still work. The same calls outside the sandbox succeed, so each denial is the
 * filter's.
 */
import { Ids, Sandbox } from "@agent-terminal/core"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { makeWorkspace, openAs, SandboxedTerminal } from "./support.js"

const workspace = makeWorkspace("seccomp")
const keyctlNumber = process.arch === "arm64" ? 219 : 250

const tiocsti = "python3 -c \"import fcntl, termios; fcntl.ioctl(0, termios.TIOCSTI, b'#')\" 2>&1 | tail -1"
const keyctl = `python3 -c "import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); ` +
  `r = libc.syscall(${keyctlNumber}, 0, -3, 0); print(r, os.strerror(ctypes.get_errno()) if r < 0 else 'ok')"`

/** A program that calls ioctl(0, TIOCSTI) through the i386 system call gate, and getpid the same way. */
const int80Source = `#include <stdio.h>
#include <sys/mman.h>
static long int80(long nr, long a, long b, long c) {
  long ret;
  __asm__ volatile ("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
  return ret;
}
int main(void) {
  char *byte = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
  byte[0] = '#';
  printf("getpid %ld\\n", int80(20, 0, 0, 0));
  printf("tiocsti %ld\\n", int80(54, 0, 0x5412, (long)(unsigned long)byte));
  return 0;
}
`

const int80Binary = (): string | undefined => {
  if (process.arch !== "x64") return undefined
  const source = path.join(workspace, "int80.c")
  const binary = path.join(workspace, "int80")
  try {
    fs.writeFileSync(source, int80Source)
    childProcess.execFileSync("gcc", ["-O0", "-o", binary, source], { stdio: "ignore" })
    return binary
  } catch {
    return undefined
  }
}

const int80 = int80Binary()

layer(SandboxedTerminal({ mode: "workspace-write", workspace }), { excludeTestServices: true })(
  "seccomp inside the sandbox (bubblewrap --seccomp)",
  (it) => {
    it.scoped("TIOCSTI from python is EPERM, and nothing reaches the terminal's input", () =>
      Effect.gen(function*() {
        const { send } = yield* openAs(Ids.OwnerId.make("tiocsti"))
        const attempt = yield* send(tiocsti)
        expect(attempt.output).toContain("[Errno 1] Operation not permitted")
        expect((yield* send("echo clean")).output).toBe("clean")
      }))

    it.scoped.skipIf(int80 === undefined)(
      `TIOCSTI through the i386 ABI (int 0x80) is EPERM too${
        int80 === undefined ? " (skipped: needs x86_64 and gcc)" : ""
      }`,
      () =>
        Effect.gen(function*() {
          const { send } = yield* openAs(Ids.OwnerId.make("int80"))
          const attempt = yield* send(int80!)
          expect(attempt.output).toMatch(/^getpid \d+$/m)
          expect(attempt.output).toContain("tiocsti -1")
          expect((yield* send("echo clean")).output).toBe("clean")
        })
    )

    it.scoped("a user namespace cannot be made: unshare -U and unshare -r fail with EPERM", () =>
      Effect.gen(function*() {
        const { send } = yield* openAs(Ids.OwnerId.make("userns"))
        const plain = yield* send("unshare -U true; echo status $?")
        expect(plain.output).toContain("unshare failed: Operation not permitted")
        expect(plain.output).toContain("status 1")
        const mapped = yield* send("unshare -r id 2>&1; echo status $?")
        expect(mapped.output).toContain("Operation not permitted")
        expect(mapped.output).not.toContain("uid=0(root) gid=0(root) groups=0(root),65534")
      }))

    it.scoped("the kernel keyring is out of reach: keyctl is EPERM", () =>
      Effect.gen(function*() {
        const { send } = yield* openAs(Ids.OwnerId.make("keyctl"))
        expect((yield* send(keyctl)).output).toBe("-1 Operation not permitted")
      }))

    it.scoped("threads (clone3 falls back to clone), child processes and gdb still work", () =>
      Effect.gen(function*() {
        const { send } = yield* openAs(Ids.OwnerId.make("still-works"))
        const threads = yield* send(
          "python3 -c \"import threading; t = threading.Thread(target=lambda: print('thread ran')); t.start(); t.join()\""
        )
        expect(threads.output).toBe("thread ran")
        expect((yield* send("bash -c 'echo child ran'")).output).toBe("child ran")
        const started = yield* send("gdb -q -batch -ex starti -ex 'info inferiors' /bin/true 2>&1")
        expect(started.output).toContain("Program stopped.")
        expect(started.output).toMatch(/process \d+/)
        const attached = yield* send(
          "sleep 60 & p=$!; gdb -q -batch -p $p -ex 'info inferiors' 2>&1 | grep -c \"process $p\" | " +
            "sed 's/^/attached: /'; kill $p; wait"
        )
        expect(attached.output).toMatch(/^attached: [1-9]/m)
      }))
  }
)

layer(SandboxedTerminal({ mode: "danger-full-access" }), { excludeTestServices: true })(
  "the same calls outside the sandbox (the contrast)",
  (it) => {
    it.scoped("unshare -U and keyctl succeed without the filter", () =>
      Effect.gen(function*() {
        const { opened, send } = yield* openAs(Ids.OwnerId.make("contrast"), { cwd: workspace })
        expect(opened.containment).not.toBe("pid-namespace")
        expect((yield* send("unshare -U true; echo status $?")).output).toBe("status 0")
        expect((yield* send(keyctl)).output).toMatch(/^\d+ ok$/)
        expect(Sandbox.isConfined("danger-full-access")).toBe(false)
      }))
  }
)
