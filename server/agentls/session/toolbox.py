"""A session's tools: the built-in ones, the editor's, Task, Skill (when the session has
skills), ExitPlanMode (once the session has been in plan mode) and its MCP servers' tools.

The set is fixed when the session opens, except for ExitPlanMode, added the first time the
session enters plan mode and kept from then on (so switching modes back and forth changes
the cached tool list once at most), and the MCP servers' tools, which come
and go as servers start and stop: `refresh`, called before a model call, takes the new
set when the servers' changed (the registry is then a new one, so a running call keeps
the one it started with).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from agentls.config import Settings
from agentls.mcp_servers.servers import McpServers
from agentls.sandbox import Sandbox
from agentls.subagents.types import AgentType
from agentls.tools.editor import editor_tools
from agentls.tools.exit_plan_mode import ExitPlanModeTool
from agentls.tools.navigation import navigation_tools
from agentls.tools.registry import ToolRegistry, default_tools
from agentls.tools.skill import SkillTool
from agentls.tools.task import TaskTool
from agentls.web_config import WebOptions
from agentls.workspace.view import WorkspaceView


class Toolbox:
    def __init__(
        self,
        workspace: WorkspaceView,
        agent_types: Sequence[AgentType],
        sandbox: Sandbox | None,
        web: WebOptions,
        todo: bool,
        skill: SkillTool | None = None,
        apply_patch: bool = False,
        plan_mode: bool = False,
    ) -> None:
        self._apply_patch = apply_patch
        self._plan_mode = plan_mode
        self._workspace = workspace
        self._agent_types = agent_types
        self._sandbox = sandbox
        self._web = web
        self._todo = todo
        self._skill = skill
        # Set when the session starts its MCP servers (start_mcp_servers).
        self.mcp: McpServers | None = None
        self._mcp_version = 0
        self.registry = self._build()

    @classmethod
    def for_settings(
        cls,
        workspace: WorkspaceView,
        agent_types: Sequence[AgentType],
        sandbox: Sandbox | None,
        settings: Settings,
        skill: SkillTool | None = None,
    ) -> Toolbox:
        """The toolbox the settings ask for (web tools, TodoWrite, apply_patch) and the
        session's skills."""
        web = WebOptions.from_settings(
            settings.web_fetch_allow_private, settings.web_search, os.environ
        )
        return cls(
            workspace,
            agent_types,
            sandbox,
            web,
            settings.todo_write,
            skill,
            apply_patch=settings.offers_apply_patch(),
            plan_mode=settings.permission_mode == "plan",
        )

    def offer_plan_exit(self) -> bool:
        """Offer ExitPlanMode from now on (the session entered plan mode); whether the set
        changed."""
        if self._plan_mode:
            return False
        self._plan_mode = True
        self.registry = self._build()
        return True

    def refresh(self) -> bool:
        """Take the MCP servers' tools when their set changed; whether it did."""
        if self.mcp is None or self.mcp.version == self._mcp_version:
            return False
        self._mcp_version = self.mcp.version
        self.registry = self._build()
        return True

    def _build(self) -> ToolRegistry:
        mcp_tools = self.mcp.tools() if self.mcp is not None else []
        builtin = default_tools(
            todo=self._todo, sandbox=self._sandbox, web=self._web, apply_patch=self._apply_patch
        )
        editor = [*editor_tools(self._workspace.intel), *navigation_tools(self._workspace.intel)]
        skill = [self._skill] if self._skill is not None else []
        plan = [ExitPlanModeTool()] if self._plan_mode else []
        task = TaskTool(self._agent_types)
        return ToolRegistry([*builtin, *editor, task, *skill, *plan, *mcp_tools])
