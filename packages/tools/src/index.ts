/**
 * @since 0.1.0
 */
export * as Handlers from "./Handlers.js"
/**
 * @since 0.2.0
 */
export * as HttpGuard from "./HttpGuard.js"
/**
 * @since 0.2.0
 */
export * as HttpListener from "./HttpListener.js"
/**
 * @since 0.3.0
 */
export * as HttpPath from "./HttpPath.js"
/**
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
 * @since 0.1.0
 */
export * as McpHttp from "./McpHttp.js"
/**
 * @since 0.2.0
 */
export * as McpStdio from "./McpStdio.js"
/**
 * @since 0.1.0
 */
export * as McpTools from "./McpTools.js"
/**
 * @since 0.1.0
 */
export * as Portable from "./Portable.js"
/**
 * @since 0.1.0
 */
export * as Render from "./Render.js"
/**
 * @since 0.1.0
 */
export * as TerminalTools from "./TerminalTools.js"
/**
 * @since 0.1.0
 */
export * as ToolCall from "./ToolCall.js"
/**
 * @since 0.1.0
 */
export * as ToolClient from "./ToolClient.js"
/**
 * The live view's sign-ins (per-login random session cookies with an expiry).
 *
 * @since 0.2.0
 */
export * as WebSessions from "./WebSessions.js"

/** @since 0.3.0 */
export * as Deployment from "./Deployment.js"

/** @since 0.3.0 */
export * as Instructions from "./Instructions.js"
