"""Slash commands: what a message such as `/review` or `/frontend:component Button` names.

`catalog` collects them from their sources (the built-ins, `.agentls/commands/` folders,
later MCP prompts), `invocation` reads a message as a command and expands a command's
prompt. Running them is the session layer's (`session/slash.py`).
"""
