/**
 * `agent-terminal doctor [--sandbox …] [--network …] [--http] [--token-file …] [--nats URL …] [--json]`: what this
 * host gives
 * (`Doctor.run` of `@agent-terminal/node`) and the HTTP token file, one line each with what follows; exit 0
 * when everything the given options need is there, 1 with the missing pieces named.
 */
import { Doctor } from "@agent-terminal/node"
import { HttpToken } from "@agent-terminal/server"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as path from "node:path"
import * as NatsOptions from "./NatsOptions.js"

/** The options of `doctor`, as parsed (declared with the command in `Cli.ts`: `Mcp` uses this module). */
export type Parsed = {
  readonly sandbox: Option.Option<"read-only" | "workspace-write" | "danger-full-access">
  readonly network: Option.Option<"off" | "isolated" | "host">
  readonly networkTool: Option.Option<string>
  readonly http: boolean
  readonly tokenFile: Option.Option<string>
  readonly json: boolean
} & Partial<NatsOptions.ConnectionOptions>

/** The HTTP token: from the environment, or its file (private to this user), or a file still to be made. */
export const tokenCheck = (file: string | undefined, needed: boolean): Doctor.Check => {
  const given = process.env[HttpToken.environmentVariable]
  const check = (ok: boolean, detail: string, consequence: string): Doctor.Check => ({
    name: "http_token",
    ok,
    needed,
    detail,
    consequence
  })
  if (given !== undefined && given !== "") {
    return given.length >= HttpToken.minLength
      ? check(true, `${HttpToken.environmentVariable} holds a token`, "HTTP requests need that bearer token")
      : check(
        false,
        `${HttpToken.environmentVariable} is shorter than ${HttpToken.minLength} characters`,
        "mcp --http refuses to start"
      )
  }
  const where = file ?? HttpToken.defaultFile()
  try {
    const stat = fs.statSync(where)
    const own = typeof process.getuid !== "function" || stat.uid === process.getuid()
    const secret = (stat.mode & 0o077) === 0
    return own && secret
      ? check(
        true,
        `token file ${where} (mode ${(stat.mode & 0o777).toString(8)}, yours)`,
        "HTTP requests need its token"
      )
      : check(
        false,
        `token file ${where} is ${own ? "readable or writable by others" : "another user's"}`,
        "mcp --http refuses it: the token would not be a secret"
      )
  } catch {
    const dir = path.dirname(where)
    let writable = false
    for (let at = dir;; at = path.dirname(at)) {
      if (fs.existsSync(at)) {
        try {
          fs.accessSync(at, fs.constants.W_OK)
          writable = true
        } catch {
          writable = false
        }
        break
      }
      if (path.dirname(at) === at) break
    }
    return writable
      ? check(true, `no token file yet at ${where}`, "mcp --http creates it (0600, 256 random bits) at its first start")
      : check(false, `no token file at ${where}, and ${dir} cannot be created`, "mcp --http cannot make its token")
  }
}

/** The findings for these needs. */
export const findings = (parsed: Pick<Parsed, "sandbox" | "network" | "networkTool" | "http" | "tokenFile">) =>
  Effect.map(
    Doctor.run({
      sandbox: Option.getOrUndefined(parsed.sandbox),
      network: Option.getOrUndefined(parsed.network),
      networkTool: Option.getOrUndefined(parsed.networkTool)
    }),
    (checks) => [...checks, tokenCheck(Option.getOrUndefined(parsed.tokenFile), parsed.http)]
  )

/** `agent-terminal doctor`. */
export const run = (parsed: Parsed) =>
  Effect.gen(function*() {
    const servers = parsed.nats === undefined
      ? undefined
      : NatsOptions.serversOf(parsed as NatsOptions.ConnectionOptions)
    const fleet = servers === undefined ? [] : yield* Effect.flatMap(
      Effect.promise(() => import("./DoctorNats.js")),
      (DoctorNats) => DoctorNats.checks(parsed as NatsOptions.ConnectionOptions, servers)
    )
    const checks = [...(yield* findings(parsed)), ...fleet]
    const missing = Doctor.missing(checks)
    if (parsed.json) {
      yield* Console.log(
        JSON.stringify({ ok: missing.length === 0, missing: missing.map((c) => c.name), checks }, null, 2)
      )
    } else {
      yield* Console.log(Doctor.render(checks))
      yield* Console.log(
        missing.length === 0
          ? "everything the given options need is here"
          : `missing for the given options: ${missing.map((c) => c.name).join(", ")}`
      )
    }
    if (missing.length > 0) process.exitCode = 1
  })
