/**
 * What a model can do next about an error, named in the tools it has: core's messages name no tool (an
 * Effect caller has none), so the tool layer adds the hint when it renders a failure.
 */

const hintOf = (error: { readonly _tag: string }): string | undefined => {
  const fields = error as { readonly _tag: string; readonly limit?: unknown; readonly signal?: unknown }
  switch (fields._tag) {
    case "SessionNotFound":
      return "terminal_list shows your sessions"
    case "SendActive":
      return "terminal_signal SIGINT interrupts it"
    case "CleanupFailed":
      return "retry terminal_close"
    case "LimitReached":
      return fields.limit === "terminals"
        ? "terminal_close closes one"
        : fields.limit === "tasks"
        ? "task_kill ends one"
        : undefined
    case "SignalRefused":
      return fields.signal === "SIGKILL" ? "terminal_close closes the session" : undefined
    case "HumanInControl":
      return "terminal_read shows what happens meanwhile; terminal_request_human waits for the hand-back"
    default:
      return undefined
  }
}

/** An error's message as a model reads it: core's message, then the tool that helps, when one does. */
export const messageOf = (error: { readonly _tag: string; readonly message: string }): string => {
  const hint = hintOf(error)
  return hint === undefined ? error.message : `${error.message} (${hint})`
}
