/**
 * Access checks of every HTTP request: canonical path, `Host`, `Origin`, bearer token or sign-in cookie,
 * body bound.
 *
 * @since 0.2.0
 */
export * as HttpGuard from "./HttpGuard.js"
/**
 * The Node HTTP server's limits, WebSocket frames bounded before they are buffered, the names it answers to.
 *
 * @since 0.2.0
 */
export * as HttpListener from "./HttpListener.js"
/**
 * One canonical spelling of a request's path, decided first.
 *
 * @since 0.3.0
 */
export * as HttpPath from "./HttpPath.js"
/**
 * The HTTP server: MCP at `/mcp` and the live view, behind the guard, on a Node server.
 *
 * @since 0.4.0
 */
export * as WebServer from "./WebServer.js"
/**
 * The bearer token of HTTP listeners and its file.
 *
 * @since 0.2.0
 */
export * as HttpToken from "./HttpToken.js"
/**
 * The live view: every terminal in a browser, the control lease, requests, the audit, recordings.
 *
 * @since 0.2.0
 */
export * as LiveView from "./LiveView.js"
/**
 * MCP over Streamable HTTP, one MCP server per MCP session.
 *
 * @since 0.1.0
 */
export * as McpHttp from "./McpHttp.js"
/**
 * The terminal tools registered on an `@effect/ai` MCP server.
 *
 * @since 0.4.0
 */
export * as McpRegistration from "./McpRegistration.js"
/**
 * MCP over stdio, one owner per connection.
 *
 * @since 0.2.0
 */
export * as McpStdio from "./McpStdio.js"
/**
 * The live view's sign-ins (per-login random session cookies with an expiry).
 *
 * @since 0.2.0
 */
export * as WebSessions from "./WebSessions.js"
