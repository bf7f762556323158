/**
 * @since 0.1.0
 */
export * as Handlers from "./Handlers.js"
/**
 * What a tool call that reports progress waits on (told by the handlers, reported by a transport).
 *
 * @since 0.4.0
 */
export * as CallProgress from "./CallProgress.js"
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

/** @since 0.3.0 */
export * as Deployment from "./Deployment.js"

/** @since 0.3.0 */
export * as Instructions from "./Instructions.js"
