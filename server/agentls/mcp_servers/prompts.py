"""An MCP server's prompts as slash commands: `/mcp__<server>__<prompt> [arguments]`.

The text after the name fills the prompt's arguments in order (quotes group words; a
prompt of one argument takes the whole text, and the last argument takes any words
left over). The server renders the prompt when the command runs; its messages become the
user message of the command's turn.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from functools import partial

from agentls.commands.catalog import SlashCommand
from agentls.errors import AgentError, InvalidParams
from agentls.mcp_servers.servers import McpServers
from agentls.mcp_servers.state import McpPromptInfo, tool_name


class McpPromptCommands:
    """The prompts of a session's ready MCP servers (a command source)."""

    def __init__(self, servers: McpServers) -> None:
        self._servers = servers

    def commands(self) -> Sequence[SlashCommand]:
        return [
            SlashCommand(
                tool_name(server, prompt.name),
                prompt.description or f"The {prompt.name} prompt of MCP server {server}",
                _hint(prompt),
                "mcp",
                render=partial(self._render, server, prompt),
            )
            for server, prompt in self._servers.prompts()
        ]

    async def _render(self, server: str, prompt: McpPromptInfo, text: str) -> str:
        arguments = prompt_arguments(prompt, text)
        try:
            return await self._servers.prompt_text(server, prompt.name, arguments)
        except Exception as exc:
            raise AgentError(
                f"MCP server {server!r} could not give prompt {prompt.name}: {exc}"
            ) from exc


def prompt_arguments(prompt: McpPromptInfo, text: str) -> dict[str, str]:
    """The command's text as the prompt's named arguments (InvalidParams names a missing
    required one)."""
    names = [a.name for a in prompt.arguments]
    if not names:
        return {}
    if len(names) == 1:
        words = [text.strip()] if text.strip() else []
    else:
        try:
            words = shlex.split(text)
        except ValueError:
            words = text.split()
        if len(words) > len(names):
            words = [*words[: len(names) - 1], " ".join(words[len(names) - 1 :])]
    given = dict(zip(names, words, strict=False))
    missing = [a.name for a in prompt.arguments if a.required and a.name not in given]
    if missing:
        raise InvalidParams(
            f"/{prompt.name} needs {', '.join(missing)} (usage: {_hint(prompt)})",
            {"field": "text"},
        )
    return given


def _hint(prompt: McpPromptInfo) -> str | None:
    if not prompt.arguments:
        return None
    return " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in prompt.arguments)
