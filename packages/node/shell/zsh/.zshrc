# agent-terminal: the zsh session shell's integration. ZDOTDIR points here, so zsh reads no rc file of
# the user's; the integration itself comes from the environment (packages/node/src/ZshDialect.ts).
eval "$AGENT_TERMINAL_INIT"
