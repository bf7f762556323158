/**
 * What a process that owns terminals loads to run them: the host's services (node-pty, the inspector, the
 * sandbox, the reaper, recordings). A client of the daemon and `--help` never load it.
 */
export { FileRecordings, NodeTerminal, Reaper } from "@agent-terminal/node"
