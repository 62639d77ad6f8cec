"""The fixed lists of the wire and the settings, each written once and typed: permission
modes, providers, delivery modes. (The agent/* method names are `agentls.methods`.)

Cheap to import (typing only), but the warm `agentls run` path avoids even that: cli.py
reads these lists only when an option that needs them is given, or for --help.
"""

from __future__ import annotations

from typing import Literal, get_args

PermissionMode = Literal["default", "acceptEdits", "plan", "bypassPermissions"]
PERMISSION_MODES: tuple[PermissionMode, ...] = get_args(PermissionMode)
# The Bash sandbox's modes, as Codex names them.
SandboxMode = Literal["read-only", "workspace-write", "danger-full-access"]
SANDBOX_MODES: tuple[SandboxMode, ...] = get_args(SandboxMode)

ProviderName = Literal["anthropic", "openai", "azure", "scripted"]
PROVIDERS: tuple[ProviderName, ...] = get_args(ProviderName)

# Where an "always" answer's permission rule is kept: the project's personal, git-ignored
# `.agentls/settings.local.json` (local), its shared `.agentls/settings.json` (project), the
# user's settings (user), or the session only.
RulesScope = Literal["session", "local", "project", "user"]
RULES_SCOPES: tuple[RulesScope, ...] = get_args(RulesScope)

# OpenAI's reasoning effort, and the field its output limit goes in (settings).
ReasoningEffort = Literal["minimal", "low", "medium", "high"]
MaxTokensField = Literal["max_tokens", "max_completion_tokens"]
# Which OpenAI API the openai provider speaks: Chat Completions, Responses, or "auto"
# (Responses on OpenAI's own endpoint and for the models only it serves).
OpenAIApi = Literal["chat", "responses", "auto"]
OPENAI_APIS: tuple[OpenAIApi, ...] = get_args(OpenAIApi)

Delivery = Literal["queue", "steer", "interrupt"]
DELIVERIES: tuple[Delivery, ...] = get_args(Delivery)

# The events user-configured command hooks run on (settings `hooks`), as Claude Code names them.
HookEvent = Literal[
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "SessionStart",
]
HOOK_EVENTS: tuple[HookEvent, ...] = get_args(HookEvent)
# What agent/rewind takes back: the files, the conversation, or both.
RewindWhat = Literal["files", "conversation", "both"]
