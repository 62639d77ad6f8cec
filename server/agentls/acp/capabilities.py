"""What the agent tells an ACP client it does, in `initialize`: every capability named as
the schema (agent-client-protocol 0.12.1, schema 1.19; the TypeScript SDK 2.4.0 alike)
names it, and only what the adapter serves."""

from __future__ import annotations

from acp import schema as acp

AGENT_CAPABILITIES = acp.AgentCapabilities(
    load_session=True,
    prompt_capabilities=acp.PromptCapabilities(image=True, audio=False, embedded_context=True),
    mcp_capabilities=acp.McpCapabilities(http=True, sse=False),
    session_capabilities=acp.SessionCapabilities(
        list=acp.SessionListCapabilities(),
        resume=acp.SessionResumeCapabilities(),
        close=acp.SessionCloseCapabilities(),
        delete=acp.SessionDeleteCapabilities(),
        fork=acp.SessionForkCapabilities(),
        # `additionalDirectories` on session/new, load, resume and fork (agentls.acp.roots).
        additional_directories=acp.SessionAdditionalDirectoriesCapabilities(),
    ),
)
