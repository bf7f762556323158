/**
 * Who is calling a tool. Every session belongs to the owner that opened it; the transport sets the
 * owner for each call (one per MCP connection), in-process callers set their own.
 *
 * @since 0.1.0
 */
import { Ids } from "@agent-terminal/core"
import * as Context from "effect/Context"

/**
 * The owner of the current tool call (default: a single local owner).
 *
 * @since 0.1.0
 */
export class CurrentOwner extends Context.Reference<CurrentOwner>()("@agent-terminal/tools/CurrentOwner", {
  defaultValue: () => Ids.OwnerId.make("local")
}) {}
