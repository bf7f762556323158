/**
 * The shells a session can run on this package's hosts, without the rest of the host's wiring: what a
 * program checks a `shell` setting against before it starts anything (a client of the daemon included).
 *
 * @since 0.3.0
 */
import { type ShellDialect, ShellDialects } from "@agent-terminal/core"
import type * as Layer from "effect/Layer"
import * as BashDialect from "./BashDialect.js"
import * as FishDialect from "./FishDialect.js"
import * as PowerShellDialect from "./PowerShellDialect.js"
import * as ZshDialect from "./ZshDialect.js"

/**
 * The shells a session can run as its shell: bash, zsh, fish and PowerShell (`pwsh`; its dialect is not
 * verified against a real pwsh here, see docs/readiness.md).
 *
 * @since 0.3.0
 */
export const dialects: ReadonlyArray<ShellDialect.Dialect> = [
  BashDialect.dialect,
  ZshDialect.dialect,
  FishDialect.dialect,
  PowerShellDialect.dialect
]

/**
 * The registry of `dialects`.
 *
 * @since 0.3.0
 */
export const dialectsLayer: Layer.Layer<ShellDialects.ShellDialects> = ShellDialects.layer(dialects)
