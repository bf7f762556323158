/**
 * A terminal's termios line discipline, read from its slave side: `stty -F <slave> -g` (GNU coreutils: the
 * `iflag:oflag:cflag:lflag:…` words in hex). The kernel gives a pty's settings to whoever opens the slave;
 * node has no `tcgetattr`, and a read through the master would be the same ioctl. ~1 ms a call (measured:
 * 50 calls of `stty -F /dev/pts/N -g` from python3, 1.09 ms each), taken only when a person types.
 */
import type { ProcessInspector } from "@agent-terminal/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { execFile } from "node:child_process"

/** Linux `<asm-generic/termbits.h>`: c_lflag bits. */
const ICANON = 0o000002
const ECHO = 0o000010

/** The modes in `stty -g` output (`undefined`: not that format). */
export const parseStty = (output: string): ProcessInspector.TerminalModes | undefined => {
  const words = output.trim().split(":")
  if (words.length < 4 || !/^[0-9a-f]+$/i.test(words[3]!)) return undefined
  const lflag = Number.parseInt(words[3]!, 16)
  return { echo: (lflag & ECHO) !== 0, canonical: (lflag & ICANON) !== 0 }
}

/** The modes of the terminal whose slave is `ttyPath` (`None`: it cannot be read). */
export const terminalModes = (
  ttyPath: string | undefined
): Effect.Effect<Option.Option<ProcessInspector.TerminalModes>> =>
  ttyPath === undefined ? Effect.succeed(Option.none()) : Effect.async((resume) => {
    const child = execFile("stty", ["-F", ttyPath, "-g"], { timeout: 2000, encoding: "utf8" }, (error, stdout) => {
      resume(Effect.succeed(error === null ? Option.fromNullable(parseStty(stdout)) : Option.none()))
    })
    return Effect.sync(() => child.kill())
  })
