/**
 * The PowerShell 7 integration (`pwsh`). PowerShell has no hook it takes from the environment or from a
 * flag that leaves the session interactive and unprofiled, so the prompt is installed by typing one line
 * into the session once pwsh waits at its own first prompt (`ShellLaunch.startupInput`): it evaluates the
 * integration, which comes in the environment (`AGENT_TERMINAL_INIT`, removed at once). The integration
 * pins the console to UTF-8 first, then installs a read-only `prompt` function that prints the
 * prompt-start marker with the last status and the prompt-end marker around `PS> ` (a user's
 * `function prompt` fails instead of breaking readiness), a continuation prompt carrying its marker, and a
 * wrapper of PSReadLine's `PSConsoleHostReadLine` that prints the command-start marker when a command line
 * is accepted. `NO_COLOR` keeps formatted output plain.
 *
 * Not verified against a real pwsh here (none can be installed on these machines): it is tested against a
 * scripted transcript of what pwsh 7 prints for the same start-up (docs/readiness.md).
 *
 * @since 0.2.0
 */
import type { ShellDialect } from "@agent-terminal/core"
import { ShellMarkers } from "@agent-terminal/terminal"

/**
 * The prompt a session shows; readiness requires exactly this text between the prompt markers.
 *
 * @since 0.2.0
 */
export const promptText = "PS> "

/**
 * The line typed into pwsh once it waits at its first prompt: it runs the integration from the environment
 * (short, and with no nonce on the screen).
 *
 * @since 0.2.0
 */
export const startupLine = ". ([scriptblock]::Create($env:AGENT_TERMINAL_INIT))"

/** A marker as a PowerShell string expression (no escape character on the screen when it is echoed). */
const marker = (kind: ShellMarkers.MarkerKind, nonce: string, extra?: string) =>
  `$([char]27)]${ShellMarkers.payload(kind, nonce, extra)}$([char]7)`

/**
 * The init script. `$?` and `$LASTEXITCODE` give the status: 0 when the last command succeeded, else the
 * native program's exit code, else 1 (a cmdlet's failure).
 *
 * @since 0.2.0
 */
export const initScript = (nonce: string): string =>
  [
    `Remove-Item Env:AGENT_TERMINAL_INIT -ErrorAction SilentlyContinue`,
    `[Console]::InputEncoding = [Console]::OutputEncoding = $global:OutputEncoding = [System.Text.UTF8Encoding]::new($false)`,
    `if (Get-Module PSReadLine) {`,
    `  Set-PSReadLineOption -PredictionSource None -HistorySaveStyle SaveNothing -BellStyle None ` +
    `-ContinuationPrompt "${marker("P", nonce)}>> "`,
    `}`,
    `Set-Item -Path function:global:prompt -Options ReadOnly -Force -Value {`,
    `  $status = if ($global:?) { 0 } elseif ($global:LASTEXITCODE -is [int] -and $global:LASTEXITCODE -ne 0) ` +
    `{ $global:LASTEXITCODE } else { 1 }`,
    `  "${marker("D", nonce, "$status")}${promptText}${marker("B", nonce)}"`,
    `}`,
    `if (Test-Path function:PSConsoleHostReadLine) {`,
    `  $global:__agent_terminal_readline = $function:PSConsoleHostReadLine`,
    `  Set-Item -Path function:global:PSConsoleHostReadLine -Force -Value {`,
    `    $line = & $global:__agent_terminal_readline`,
    `    [Console]::Write("${marker("C", nonce)}")`,
    `    $line`,
    `  }`,
    `}`
  ].join("\n")

/**
 * The PowerShell dialect (`pwsh`, also reached as `powershell`).
 *
 * @since 0.2.0
 */
export const dialect: ShellDialect.Dialect = {
  name: "pwsh",
  aliases: ["powershell"],
  promptText,
  launch: ({ nonce, shell }) => ({
    file: shell,
    args: ["-NoLogo", "-NoProfile"],
    env: {
      NO_COLOR: "1",
      POWERSHELL_UPDATECHECK: "Off",
      POWERSHELL_TELEMETRY_OPTOUT: "1",
      AGENT_TERMINAL_INIT: initScript(nonce)
    },
    startupInput: `${startupLine}\r`
  })
}
