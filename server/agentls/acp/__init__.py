"""The Agent Client Protocol front end: `agentls acp` serves the core to ACP editors (Zed,
JetBrains, CodeCompanion, agent-shell) over newline-delimited JSON-RPC on stdio, through
the `agent-client-protocol` SDK. Like the LSP server and the CLI, it is one adapter over
the core; protocol/ACP.md maps each method and update to what the core does.
"""
