"""Whether the user trusts a plugin to run its hooks and MCP servers, asked once per
plugin and remembered (with the project's trust answers) by a digest of its files.

Both the hooks (before the first message) and the MCP servers (before the first model
call) ask through the one `PluginTrust` of the session, so a plugin bringing both is asked
about once. A changed plugin has another digest and is asked about again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentls.events import Emit, PermissionRequest
from agentls.messages import new_id
from agentls.permissions import trust
from agentls.permissions.asking import PermissionPrompter, ask_permission


@dataclass(frozen=True, slots=True)
class TrustSubject:
    """A plugin that would run something: its name, digest and what it runs."""

    name: str
    digest: str
    runs: tuple[str, ...]


@dataclass(slots=True)
class PluginTrust:
    home: Path
    subjects: Sequence[TrustSubject] = ()
    # The answers known so far (remembered, or given in this session).
    answers: dict[str, bool] = field(default_factory=dict)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def __post_init__(self) -> None:
        for subject in self.subjects:
            remembered = trust.trusted(self.home, _key(subject.name), subject.digest)
            if remembered is not None:
                self.answers[subject.name] = remembered

    def allowed(self, plugin: str) -> bool:
        return self.answers.get(plugin) is True

    def refused(self, plugin: str) -> bool:
        return self.answers.get(plugin) is False

    async def decide(self, emit: Emit, prompter: PermissionPrompter) -> None:
        """Ask about every plugin not decided yet, one question each."""
        async with self._lock:
            for subject in self.subjects:
                if subject.name not in self.answers:
                    self.answers[subject.name] = await self._ask(subject, emit, prompter)

    async def _ask(self, subject: TrustSubject, emit: Emit, prompter: PermissionPrompter) -> bool:
        request = PermissionRequest(
            new_id("perm"),
            new_id("plugin"),
            f"Trust the plugin {subject.name}? Its hooks and MCP servers run these commands "
            "with your rights: " + "; ".join(subject.runs),
            {"plugin": subject.name, "runs": list(subject.runs)},
            trust.trust_options(f"the plugin {subject.name}"),
        )
        answer = await ask_permission(prompter, emit, request)
        approved = answer.option_id.startswith("allow")
        if answer.option_id.endswith("always"):
            trust.remember(self.home, _key(subject.name), subject.digest, approved)
        return approved


def _key(plugin: str) -> str:
    return f"plugin:{plugin}"
