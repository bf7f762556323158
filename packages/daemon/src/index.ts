/**
 * @since 0.2.0
 */
export * as Credentials from "./Credentials.js"
/**
 * @since 0.2.0
 */
export * as DaemonServer from "./DaemonServer.js"
/**
 * @since 0.3.0
 */
export * as Framing from "./Framing.js"
/**
 * @since 0.2.0
 */
export * as Paths from "./Paths.js"
/**
 * The live view's operations as an RPC group of their own, and its handlers.
 *
 * @since 0.4.0
 */
export * as OversightProtocol from "./OversightProtocol.js"
/**
 * @since 0.2.0
 */
export * as Protocol from "./Protocol.js"
/**
 * @since 0.2.0
 */
export * as RemoteTerminal from "./RemoteTerminal.js"
/**
 * @since 0.2.0
 */
export * as TerminalRegistry from "./TerminalRegistry.js"
