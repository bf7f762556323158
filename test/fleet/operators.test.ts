/**
 * The fleet's operator side through the CLI a user runs: `serve --nats`, `mcp --nats`, `doctor --nats` with
 * the credentials of an operator (JWT) deployment (`--nats-creds`), with nkeys and TLS, and what each says
 * when NATS refuses it. Real nats-servers (operator mode: JWTs preloaded; a TLS cluster verifying clients),
 * real CLI processes.
 */
import { FleetRegistry, Nats, Subjects, TestFleet, TestOperator } from "@agent-terminal/fleet"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { spawn } from "node:child_process"
import { built, cliBin, connectMcp, type Daemon, makeHome, startDaemon, waitUntil } from "../daemon/support.js"
import { descendsFrom } from "./support.js"

/** Run the CLI to its end: its exit code, stdout and stderr (killed past `timeoutMs`). */
const runCli = (args: ReadonlyArray<string>, env: Record<string, string>, timeoutMs = 30_000) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [cliBin, ...args], { env, stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.once("exit", (status) => {
      clearTimeout(timer)
      resolve({ status, stdout, stderr })
    })
  })

/** `doctor --json --nats …`'s checks by name. */
const doctor = async (env: Record<string, string>, args: ReadonlyArray<string>) => {
  const run = await runCli(["doctor", "--json", "--nats", ...args], env)
  const report = JSON.parse(run.stdout) as { checks: Array<{ name: string; ok: boolean; detail: string }> }
  return { status: run.status, checks: Object.fromEntries(report.checks.map((c) => [c.name, c])) }
}

/** No JavaScript stack in what a refused process printed: the message only. */
const noTraceback = (stderr: string) => expect(stderr).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m)

/**
 * Through `mcp --nats <args>`: open a terminal on `machine`, send to it, and whether its shell (the pid it
 * says itself) runs under the machine's process `machinePid`; checked while the terminal is open.
 */
const openThroughMcp = async (
  env: Record<string, string>,
  args: ReadonlyArray<string>,
  machine: string,
  machinePid: number
) => {
  const mcp = await connectMcp(env, ["--nats", ...args])
  try {
    const opened = await mcp.call("terminal_open", { name: "via-cli", machine })
    expect(opened.isError, JSON.stringify(opened)).toBe(false)
    const sent = await mcp.call("terminal_send", { sessionId: opened.sessionId, text: "echo pid=$$" })
    const pid = Number(/pid=(\d+)/.exec(String(sent.output))?.[1])
    return { sessionId: String(opened.sessionId), pid, onMachine: descendsFrom(pid, machinePid) }
  } finally {
    await mcp.client.close()
  }
}

describe.runIf(built)("an operator (JWT) deployment through the CLI: --nats-creds", () => {
  const scope = Effect.runSync(Scope.make())
  let operator: TestOperator.Operator
  let m1: Daemon
  const home = makeHome()

  beforeAll(async () => {
    operator = await Effect.runPromise(TestOperator.make().pipe(Scope.extend(scope)))
    await Effect.runPromise(
      Effect.flatMap(
        Nats.readCredentials(operator.credsFiles.admin!),
        (creds) =>
          FleetRegistry.createBucket({ replicas: 1 }).pipe(
            Effect.provide(Nats.layer({ servers: [operator.url], user: "admin", creds }))
          )
      )
    )
    m1 = await startDaemon(home.env, [
      "--nats",
      operator.url,
      "--machine",
      "m1",
      "--nats-creds",
      operator.credsFiles.m1!
    ])
  }, 60_000)

  afterAll(async () => {
    await m1?.stop()
    home.dispose()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }, 60_000)

  it(
    "a machine joins with its .creds; a client's .creds (its JWT names the user) opens on it and doctor sees it",
    async () => {
      const env = makeHome()
      try {
        const checked = await doctor(env.env, [operator.url, "--nats-creds", operator.credsFiles.c1!])
        expect(checked.checks.nats_connection?.detail).toContain("as c1")
        expect(checked.checks.nats_permissions?.ok).toBe(true)
        expect(checked.checks.nats_permissions?.detail).toContain("m1 (")
        const opened = await openThroughMcp(
          env.env,
          [operator.url, "--nats-creds", operator.credsFiles.c2!],
          "m1",
          m1.pid
        )
        expect(opened.sessionId.startsWith("m1~")).toBe(true)
        expect(opened.onMachine).toBe(true)
      } finally {
        env.dispose()
      }
    },
    60_000
  )

  it(
    "a machine hears of a client's closed connection (the system's event, imported under the fleet's subject)",
    async () => {
      const heard = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const creds = (user: string) => Nats.readCredentials(operator.credsFiles[user]!)
        const machine = yield* Nats.make({ servers: [operator.url], user: "m2", creds: yield* creds("m2") })
        const events: Array<string> = []
        const subscription = machine.connection.subscribe(Subjects.disconnectEvents("FLEET"), {
          callback: (_error, message) => {
            events.push(message.string())
          }
        })
        yield* Effect.addFinalizer(() => Effect.sync(() => subscription.unsubscribe()))
        yield* Effect.promise(() => machine.connection.flush())
        // a client connects and goes
        yield* Effect.scoped(
          Nats.make({ servers: [operator.url], user: "c3", creds: yield* creds("c3"), name: "leaving" })
        )
        yield* Effect.promise(() => waitUntil(() => events.some((event) => event.includes("leaving")), 10_000))
        return events.find((event) => event.includes("leaving"))
      })))
      expect(heard).toContain("io.nats.server.advisory.v1.client_disconnect")
    },
    60_000
  )

  it(
    "a machine started with m1's credentials as --machine m2 is refused by NATS and says so, without a traceback",
    async () => {
      const other = makeHome()
      try {
        const run = await runCli([
          "serve",
          "--nats",
          operator.url,
          "--machine",
          "m2",
          "--nats-creds",
          operator.credsFiles.m1!
        ], other.env)
        expect(run.status).toBe(1)
        expect(run.stderr).toMatch(/agent-terminal serve: NATS does not permit .*Permissions Violation/)
        expect(run.stderr).toContain("agent-terminal.m.m2.rpc")
        noTraceback(run.stderr)
      } finally {
        other.dispose()
      }
    },
    60_000
  )

  it("a client without credentials is refused: doctor and mcp say why", async () => {
    const env = makeHome()
    try {
      const checked = await doctor(env.env, [operator.url])
      expect(checked.status).toBe(1)
      expect(checked.checks.nats_credentials?.ok).toBe(false)
      expect(checked.checks.nats_credentials?.detail).toMatch(/authori[sz]ation/i)
      const mcp = await runCli(["mcp", "--nats", operator.url], env.env)
      expect(mcp.status).toBe(1)
      expect(mcp.stderr).toMatch(/agent-terminal: cannot connect to NATS at .*authori[sz]ation/i)
      noTraceback(mcp.stderr)
      // a file that is not a .creds file: said before any connection
      const bad = await runCli(["mcp", "--nats", operator.url, "--nats-creds", cliBin], env.env)
      expect(bad.stderr).toContain(`the credentials file ${cliBin} cannot be read`)
      noTraceback(bad.stderr)
      // two credentials: which one was meant is not guessed
      const both = await runCli([
        "doctor",
        "--nats",
        operator.url,
        "--nats-creds",
        operator.credsFiles.c1!,
        "--nats-nkey",
        operator.credsFiles.c1!
      ], env.env)
      expect(both.status).toBe(1)
      expect(both.stdout).toContain("give either credentials (a .creds file) or an nkey seed")
    } finally {
      env.dispose()
    }
  }, 60_000)
})

describe.runIf(built)("TLS and nkeys through the CLI (servers with a CA, verifying clients' certificates)", () => {
  const scope = Effect.runSync(Scope.make())
  let fleet: TestFleet.Fleet
  let tls: TestFleet.Tls
  let m1: Daemon
  const home = makeHome()
  /** The TLS options of a process holding `certificate` and trusting `caFile`. */
  const tlsArgs = (caFile: string, certificate: { readonly certFile: string; readonly keyFile: string }) => [
    "--nats-ca",
    caFile,
    "--nats-cert",
    certificate.certFile,
    "--nats-key",
    certificate.keyFile
  ]

  beforeAll(async () => {
    fleet = await Effect.runPromise(
      TestFleet.make({ servers: 1, tls: { verifyClients: true } }).pipe(Scope.extend(scope))
    )
    tls = fleet.tls!
    m1 = await startDaemon(home.env, [
      "--nats",
      fleet.urls.join(","),
      "--machine",
      "m1",
      "--nats-nkey",
      fleet.keys.m1.seedFile,
      ...tlsArgs(tls.caFile, tls.client)
    ])
  }, 60_000)

  afterAll(async () => {
    await m1?.stop()
    home.dispose()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }, 60_000)

  it("a machine and a client with CA-signed certificates work", async () => {
    const env = makeHome()
    try {
      const opened = await openThroughMcp(
        env.env,
        [
          fleet.urls.join(","),
          "--nats-user",
          "c1",
          "--nats-nkey",
          fleet.keys.c1.seedFile,
          ...tlsArgs(tls.caFile, tls.client)
        ],
        "m1",
        m1.pid
      )
      expect(opened.sessionId.startsWith("m1~")).toBe(true)
      expect(opened.onMachine).toBe(true)
    } finally {
      env.dispose()
    }
  }, 60_000)

  it("a client with an untrusted certificate, or trusting another CA, is refused with a clear message", async () => {
    const env = makeHome()
    try {
      const c1 = [fleet.urls.join(","), "--nats-user", "c1", "--nats-nkey", fleet.keys.c1.seedFile]
      const untrusted = [...c1, ...tlsArgs(tls.caFile, tls.untrustedClient)]
      const checked = await doctor(env.env, untrusted)
      expect(checked.status).toBe(1)
      expect(checked.checks.nats_connection?.ok).toBe(false)
      const refusedCertificate =
        /the server refused the TLS connection \(alert "[a-z ]+"\): it does not accept this process's certificate/
      expect(checked.checks.nats_connection?.detail).toMatch(refusedCertificate)
      const mcp = await runCli(["mcp", "--nats", ...untrusted], env.env)
      expect(mcp.status).toBe(1)
      expect(mcp.stderr).toMatch(/^agent-terminal: cannot connect to NATS at /m)
      expect(mcp.stderr).toMatch(refusedCertificate)
      noTraceback(mcp.stderr)
      // trusting another CA than the one that signed the servers' certificate
      const otherCa = await doctor(env.env, [...c1, ...tlsArgs(tls.untrustedCaFile, tls.client)])
      expect(otherCa.checks.nats_connection?.ok).toBe(false)
      expect(otherCa.checks.nats_connection?.detail).toContain("the servers' certificate is not signed by this CA")
      // a machine too: it says why and exits
      const machine = await runCli([
        "serve",
        "--nats",
        fleet.urls.join(","),
        "--machine",
        "m2",
        "--nats-nkey",
        fleet.keys.m2.seedFile,
        ...tlsArgs(tls.caFile, tls.untrustedClient)
      ], env.env)
      expect(machine.status).toBe(1)
      expect(machine.stderr).toMatch(refusedCertificate)
      noTraceback(machine.stderr)
    } finally {
      env.dispose()
    }
  }, 60_000)

  it("a machine started with m1's nkey as --machine m2 is refused by NATS and says so", async () => {
    const env = makeHome()
    try {
      const run = await runCli([
        "serve",
        "--nats",
        fleet.urls.join(","),
        "--machine",
        "m2",
        "--nats-nkey",
        fleet.keys.m1.seedFile,
        ...tlsArgs(tls.caFile, tls.client)
      ], env.env)
      expect(run.status).toBe(1)
      expect(run.stderr).toMatch(/agent-terminal serve: NATS does not permit .*Permissions Violation/)
      noTraceback(run.stderr)
    } finally {
      env.dispose()
    }
  }, 60_000)
})
