/**
 * The `/proc` reads behind `waitFor: {listening}` and the foreground activity of a `timeout` result, over an
 * in-memory `/proc` (the same functions run on the real one in test/readiness/listening.test.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { activityOf, foregroundActivity } from "../src/internal/proc/activity.js"
import { listening, parseTcp, parseUnix } from "../src/internal/proc/listening.js"
import type { ProcFs } from "../src/internal/proc/procFs.js"
import { procError } from "../src/internal/proc/procFs.js"
import { parseStat } from "../src/internal/proc/procStat.js"

const tcpHeader = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode"
const tcp = (local: string, state: string, inode: number) =>
  `   0: ${local} 00000000:0000 ${state} 00000000:00000000 00:00000000 00000000  1000        0 ${inode} 1 0 100 0 0 10 0`
const unixHeader = "Num       RefCount Protocol Flags    Type St Inode Path"

/** `stat` text of a process: state, pgid and start time are what the code reads. */
const stat = (pid: number, comm: string, state: string, ppid: number, pgid: number, start: number) =>
  `${pid} (${comm}) ${state} ${ppid} ${pgid} ${pgid} 34816 ${pgid} 4194304 0 0 0 0 0 0 0 0 20 0 1 0 ${start} 0 0`

const procFsOf = (texts: Record<string, string>, links: Record<string, string>): ProcFs => ({
  readText: (path) => texts[path] ?? procError("ENOENT"),
  list: (path) => {
    const prefix = `${path}/`
    const names = new Set(
      [...Object.keys(texts), ...Object.keys(links)].filter((key) => key.startsWith(prefix)).map((key) =>
        key.slice(prefix.length).split("/")[0]!
      )
    )
    return names.size === 0 ? procError("ENOENT") : [...names]
  },
  readLink: (path) => links[path] ?? procError("ENOENT"),
  statFd: () => procError("ENOENT"),
  statPath: () => procError("ENOENT"),
  readMemory: () => procError("EIO")
})

describe("the listening tables", () => {
  it("takes LISTEN entries of tcp and tcp6 with their address and port, and unix sockets that accept", () => {
    const v4 = parseTcp(
      [tcpHeader, tcp("0100007F:1F40", "0A", 111), tcp("0100007F:1F41", "01", 112), tcp("00000000:0050", "0A", 113)]
        .join("\n"),
      "tcp"
    )
    expect([...v4.entries()]).toEqual([
      ["111", { protocol: "tcp", address: "127.0.0.1", port: 8000 }],
      ["113", { protocol: "tcp", address: "0.0.0.0", port: 80 }]
    ])
    const v6 = parseTcp(
      [
        tcpHeader,
        tcp("00000000000000000000000001000000:1F90", "0A", 211),
        tcp("00000000000000000000000000000000:0016", "0A", 212),
        tcp("B80D0120000000000000000001000000:0016", "0A", 213)
      ].join("\n"),
      "tcp6"
    )
    expect(v6.get("211")).toEqual({ protocol: "tcp6", address: "::1", port: 8080 })
    expect(v6.get("212")).toEqual({ protocol: "tcp6", address: "::", port: 22 })
    expect(v6.get("213")).toEqual({ protocol: "tcp6", address: "2001:db8::1", port: 22 })
    const unix = parseUnix([
      unixHeader,
      "0000000000000000: 00000002 00000000 00010000 0001 01 311 /run/app.sock",
      "0000000000000000: 00000003 00000000 00000000 0001 03 312 /run/other.sock",
      "0000000000000000: 00000002 00000000 00010000 0001 01 313 @abstract"
    ].join("\n"))
    expect([...unix.keys()]).toEqual(["311", "313"])
    expect(unix.get("313")).toEqual({ protocol: "unix", address: "@abstract" })
  })

  it("finds the sockets a tree listens on, each once, in its own network namespace's tables", () => {
    const texts: Record<string, string> = {
      "10/stat": stat(10, "bash", "S", 1, 10, 100),
      "10/task/10/children": "20",
      "20/stat": stat(20, "gunicorn", "S", 10, 20, 200),
      "20/task/20/children": "21",
      "21/stat": stat(21, "gunicorn", "S", 20, 20, 210),
      "21/task/21/children": "",
      // the host's table does not hold the inode: only the namespace's does
      "10/net/tcp": [tcpHeader].join("\n"),
      "20/net/tcp": [tcpHeader, tcp("0100007F:1F40", "0A", 501)].join("\n")
    }
    const links: Record<string, string> = {
      "10/ns/net": "net:[1]",
      "20/ns/net": "net:[2]",
      "21/ns/net": "net:[2]",
      "20/fd/0": "/dev/null",
      "20/fd/5": "socket:[501]",
      "21/fd/5": "socket:[501]",
      "21/fd/6": "socket:[999]"
    }
    // list() of a pid's task directory: one thread each
    for (const pid of [10, 20, 21]) texts[`${pid}/task/${pid}/stat`] = texts[`${pid}/stat`]!
    expect(listening(procFsOf(texts, links), 10)).toEqual([
      { pid: 20, name: "gunicorn", protocol: "tcp", address: "127.0.0.1", port: 8000 }
    ])
  })
})

describe("the foreground activity", () => {
  const syscall = (nr: number, fd = 0) => `${nr} 0x${fd.toString(16)} 0x0 0x0 0x0 0x0 0x0 0x7ffc 0x7f00`

  it("names the state of a process from its stat letter, its syscall and the descriptor it waits on", () => {
    const of = (state: string, call: string | undefined, links: Record<string, string> = {}) =>
      activityOf(
        procFsOf(call === undefined ? {} : { "42/syscall": call }, links),
        "x64",
        parseStat(stat(42, "prog", state, 1, 42, 1))!
      )
    expect(of("R", undefined)).toEqual({ pid: 42, name: "prog", state: "running" })
    expect(of("T", undefined).state).toBe("stopped")
    expect(of("S", syscall(230))).toMatchObject({ state: "sleeping", detail: "clock_nanosleep" })
    expect(of("S", syscall(61))).toMatchObject({ state: "waiting_child", detail: "wait4" })
    expect(of("S", syscall(0, 0), { "42/fd/0": "pipe:[77]" })).toMatchObject({
      state: "reading_pipe",
      detail: "read fd 0 (pipe)"
    })
    expect(of("S", syscall(0, 3), { "42/fd/3": "socket:[78]" }).state).toBe("reading_socket")
    expect(of("S", syscall(0, 0), { "42/fd/0": "/dev/pts/4" }).state).toBe("reading_terminal")
    expect(of("S", syscall(0, 4), { "42/fd/4": "/var/log/app.log" })).toMatchObject({
      state: "reading_file",
      detail: "read fd 4 (/var/log/app.log)"
    })
    expect(of("S", syscall(288)).state).toBe("accepting")
    expect(of("S", syscall(232)).state).toBe("polling")
    expect(of("S", "running").state).toBe("running")
    expect(of("S", syscall(9999))).toMatchObject({ state: "blocked", detail: "syscall 9999" })
  })

  it("of a group, names the member doing the work: not the script waiting for its child", () => {
    const texts: Record<string, string> = {
      "10/stat": stat(10, "bash", "S", 1, 10, 100),
      "10/task/10/children": "20",
      "20/stat": stat(20, "bash", "S", 10, 20, 200),
      "20/syscall": syscall(61),
      "20/task/20/children": "21",
      "21/stat": stat(21, "sleep", "S", 20, 20, 210),
      "21/syscall": syscall(230),
      "21/task/21/children": ""
    }
    expect(foregroundActivity(procFsOf(texts, {}), "x64", 10, 20)).toEqual({
      pid: 21,
      name: "sleep",
      state: "sleeping",
      detail: "clock_nanosleep"
    })
    // one member on a CPU is the answer whatever the others do
    texts["20/stat"] = stat(20, "bash", "R", 10, 20, 200)
    expect(foregroundActivity(procFsOf(texts, {}), "x64", 10, 20)).toMatchObject({ pid: 20, state: "running" })
    // a group none of the shell's descendants is in: nothing to say
    expect(foregroundActivity(procFsOf(texts, {}), "x64", 10, 99)).toBeUndefined()
  })
})
