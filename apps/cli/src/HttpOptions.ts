/**
 * The options of the HTTP transport (`mcp --http`, `serve --http`), each with an `AGENT_TERMINAL_*`
 * environment fallback: declared apart from the server (`HttpTransport`), which is loaded only when one starts.
 */
import { Options } from "@effect/cli"
import { integer, type Parsed, text } from "./CliOptions.js"

const repeated = (flag: string, env: string, description: string) =>
  Options.text(flag).pipe(
    Options.repeated,
    Options.withDescription(`${description} Repeatable. Environment: ${env} (comma-separated).`)
  )

/** The options of the HTTP transport. */
export const httpOptions = {
  http: integer("http", "AGENT_TERMINAL_HTTP_PORT", "Serve MCP over Streamable HTTP on this port (0: any free port)."),
  host: text(
    "host",
    "AGENT_TERMINAL_HTTP_HOST",
    "Address the HTTP server binds (default 127.0.0.1, loopback only; another address warns: the traffic is plain text)."
  ),
  sessionIdleMs: integer(
    "session-idle-ms",
    "AGENT_TERMINAL_SESSION_IDLE_MS",
    "Close an HTTP MCP session after this long without a request (ms; default 300000); an anonymous session's " +
      "terminals close with it."
  ),
  ownerIdleMs: integer(
    "owner-idle-ms",
    "AGENT_TERMINAL_OWNER_IDLE_MS",
    "A named owner's terminals (the Agent-Terminal-Owner header) outlive its last HTTP MCP session by this long " +
      "(ms; default 1800000)."
  ),
  tokenFile: text(
    "token-file",
    "AGENT_TERMINAL_TOKEN_FILE",
    "The file holding the bearer token, created (0600, 256 random bits) if missing (default " +
      "$AGENT_TERMINAL_STATE_DIR/token, i.e. ~/.agent-terminal/token). AGENT_TERMINAL_TOKEN gives the token itself."
  ),
  allowedOrigin: repeated(
    "allowed-origin",
    "AGENT_TERMINAL_ALLOWED_ORIGINS",
    "A browser origin allowed to call the server (exact, e.g. https://app.example; default: the server's own)."
  ),
  allowedHost: repeated(
    "allowed-host",
    "AGENT_TERMINAL_ALLOWED_HOSTS",
    "A Host header value the server answers besides its bound address (a proxy's name)."
  ),
  maxBodyBytes: integer(
    "max-body-bytes",
    "AGENT_TERMINAL_MAX_BODY_BYTES",
    "The bound of a request body (bytes; default 4194304): longer ones are refused with 413 before they are parsed."
  ),
  maxSessions: integer(
    "max-sessions",
    "AGENT_TERMINAL_MAX_SESSIONS",
    "MCP sessions open at once (default 64); an initialize past it is refused with 503 and Retry-After."
  ),
  maxConnections: integer(
    "max-connections",
    "AGENT_TERMINAL_MAX_CONNECTIONS",
    "HTTP connections open at once (default 256)."
  ),
  headersTimeoutMs: integer(
    "headers-timeout-ms",
    "AGENT_TERMINAL_HEADERS_TIMEOUT_MS",
    "Time a client has to send a request's headers (ms; default 10000)."
  ),
  requestTimeoutMs: integer(
    "request-timeout-ms",
    "AGENT_TERMINAL_REQUEST_TIMEOUT_MS",
    "Time a client has to send a whole request (ms; default 30000); responses are not timed."
  ),
  keepAliveTimeoutMs: integer(
    "keep-alive-timeout-ms",
    "AGENT_TERMINAL_KEEP_ALIVE_TIMEOUT_MS",
    "How long an idle keep-alive connection is kept (ms; default 5000)."
  )
}

/** The HTTP options, as parsed. */
export type HttpOptions = { readonly [K in keyof typeof httpOptions]: Parsed<(typeof httpOptions)[K]> }

/** Each option's flag and variable, for messages. */
export const flags: Record<string, string> = {
  http: "--http / AGENT_TERMINAL_HTTP_PORT",
  host: "--host / AGENT_TERMINAL_HTTP_HOST",
  sessionIdleMs: "--session-idle-ms / AGENT_TERMINAL_SESSION_IDLE_MS",
  ownerIdleMs: "--owner-idle-ms / AGENT_TERMINAL_OWNER_IDLE_MS",
  token: "AGENT_TERMINAL_TOKEN / --token-file / AGENT_TERMINAL_TOKEN_FILE",
  allowedOrigin: "--allowed-origin / AGENT_TERMINAL_ALLOWED_ORIGINS",
  allowedHost: "--allowed-host / AGENT_TERMINAL_ALLOWED_HOSTS",
  maxBodyBytes: "--max-body-bytes / AGENT_TERMINAL_MAX_BODY_BYTES",
  maxSessions: "--max-sessions / AGENT_TERMINAL_MAX_SESSIONS",
  maxConnections: "--max-connections / AGENT_TERMINAL_MAX_CONNECTIONS",
  headersTimeoutMs: "--headers-timeout-ms / AGENT_TERMINAL_HEADERS_TIMEOUT_MS",
  requestTimeoutMs: "--request-timeout-ms / AGENT_TERMINAL_REQUEST_TIMEOUT_MS",
  keepAliveTimeoutMs: "--keep-alive-timeout-ms / AGENT_TERMINAL_KEEP_ALIVE_TIMEOUT_MS"
}
