"""Settings, layered: defaults → user file → project file → environment → client → session.

A bad value never stops the daemon: it is reported in `problems` and its default is kept.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, get_args

from agentls.mcp_servers.config import McpServerConfig, merge_servers, parse_servers
from agentls.names import (
    OPENAI_APIS,
    PERMISSION_MODES,
    PROVIDERS,
    MaxTokensField,
    OpenAIApi,
    PermissionMode,
    ReasoningEffort,
    RulesScope,
)
from agentls.pricing import Price
from agentls.sandbox import SandboxSettings, parse_sandbox
from agentls.web_config import SearchBackend, parse_search_backend

# Settings whose value is one of a few names (None, where allowed, unsets them).
_CHOICES: dict[str, tuple[str, ...]] = {
    "permission_rules_scope": get_args(RulesScope),
    "reasoning_effort": get_args(ReasoningEffort),
    "openai_max_tokens_field": get_args(MaxTokensField),
}
DEFAULT_MODELS = {
    "anthropic": "claude-sonnet-4-5",
    "openai": "gpt-4.1",
    "azure": "gpt-4.1",
    "scripted": "scripted",
}
CREDENTIALS_HELP = (
    "No model provider is configured. Set ANTHROPIC_API_KEY (Anthropic), or OPENAI_API_KEY "
    "and/or OPENAI_BASE_URL (OpenAI or an OpenAI-compatible server such as vLLM, Ollama or "
    "DeepSeek), or AZURE_OPENAI_API_KEY and AZURE_OPENAI_ENDPOINT (Azure OpenAI), and "
    "optionally AGENTLS_PROVIDER=anthropic|openai|azure|scripted and AGENTLS_MODEL."
)


@dataclass(frozen=True, slots=True)
class Settings:
    provider: str | None = None
    model: str | None = None
    anthropic_api_key: str | None = field(default=None, repr=False)
    anthropic_base_url: str | None = None
    openai_api_key: str | None = field(default=None, repr=False)
    openai_base_url: str | None = None
    azure_api_key: str | None = field(default=None, repr=False)
    azure_endpoint: str | None = None
    # The deployment's name (Azure routes by it); the model name when `model` is unset.
    azure_deployment: str | None = None
    azure_api_version: str = "2024-10-21"
    home: Path = field(default_factory=lambda: default_home())
    permission_mode: PermissionMode = "default"
    max_turns: int = 100
    max_tokens: int = 8192
    thinking_budget: int | None = None
    # None: the model table in context.budget decides.
    context_window: int | None = None
    # Whether the model takes images; None: the model table in agentls.images decides.
    vision: bool | None = None
    idle_timeout: float = 300.0
    model_retries: int = 10
    retry_budget: float = 120.0
    # The most output tokens the model takes; None: a stated or tabled limit, if any.
    max_output_tokens: int | None = None
    reasoning_effort: ReasoningEffort | None = None
    openai_stream_usage: bool = True
    openai_max_tokens_field: MaxTokensField | None = None
    # Chat Completions or Responses for the openai provider; "auto" decides by endpoint
    # and model (agentls.providers.factory).
    openai_api: OpenAIApi = "auto"
    # Per-model prices (USD per million tokens) over the built-in table.
    prices: Mapping[str, Price] = field(default_factory=dict)
    read_concurrency: int = 10
    nudge_limit: int = 2
    # A turn's budget (sub-agents included); None: no limit.
    max_budget_tokens: int | None = None
    max_budget_usd: float | None = None
    # Identical steps in a row before the stuck detector nudges, then stops; 0: off.
    stuck_threshold: int = 3
    # Whether the model gets the TodoWrite tool (its plan reaches clients as `plan` events).
    todo_write: bool = True
    # Whether the model gets apply_patch (Codex's patch format): "auto" offers it to the
    # OpenAI and Azure providers' models, which are trained on it.
    apply_patch_tool: bool | Literal["auto"] = "auto"
    # Where "always" answers are kept: the project's personal file (settings.local.json,
    # never committed), its shared one, the user's, or nowhere.
    permission_rules_scope: RulesScope = "local"
    # Sub-agents (Task): how deep they nest, and how many run at once in a session.
    subagent_depth: int = 3
    max_subagents: int = 20
    # MCP servers (by name, across the layers); a tool call's limit; how long a turn
    # waits for servers still starting before its first model call.
    mcp_servers: tuple[McpServerConfig, ...] = ()
    # Servers by name the user turned off (agent/setMcpServerEnabled keeps the list in
    # the project's settings.local.json).
    disabled_mcp_servers: tuple[str, ...] = ()
    # After a file change, the editor's new errors are read (when it reports diagnostics)
    # once it had this long to look again.
    editor_diagnostics: bool = True
    diagnostics_wait: float = 1.5
    mcp_tool_timeout: float = 600.0
    mcp_startup_timeout: float = 10.0
    # Over a socket daemon: how long a turn runs on once no window sees its session (0: not).
    detached_turn_timeout: float = 600.0
    # WebFetch of loopback, private and link-local addresses (refused unless this is set).
    web_fetch_allow_private: bool = False
    # The search backend WebSearch asks; None: WebSearch is not offered.
    web_search: SearchBackend | None = None
    # Bash under bubblewrap: its mode (None: the default), network and writable paths.
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    additional_directories: tuple[str, ...] = ()
    append_system_prompt: str | None = None
    script: str | list[dict[str, Any]] | None = None
    request_log: str | None = None
    # Each layer's `hooks` object with the layer's name: hooks add up across layers instead
    # of replacing each other (agentls.hooks reads them; the project's need the user's trust).
    hook_layers: tuple[tuple[str, Any], ...] = ()
    # Daemon-wide bounds on live sessions: how many at once, and the seconds one may sit
    # unused (no request, no turn) before it is closed (0: never).
    max_live_sessions: int = 64
    session_idle_timeout: int = 3600

    def resolved_provider(self) -> str | None:
        """The provider to use: the configured one, else the one whose credentials are set."""
        if self.provider:
            return self.provider
        if self.anthropic_api_key:
            return "anthropic"
        if self.openai_api_key or self.openai_base_url:
            return "openai"
        if self.azure_api_key and self.azure_endpoint:
            return "azure"
        if self.script is not None:
            return "scripted"
        return None

    def offers_apply_patch(self) -> bool:
        """Whether sessions get the apply_patch tool (see `apply_patch_tool`)."""
        if self.apply_patch_tool == "auto":
            return self.resolved_provider() in ("openai", "azure")
        return bool(self.apply_patch_tool)

    def resolved_model(self) -> str:
        provider = self.resolved_provider() or "anthropic"
        if provider == "azure" and not self.model and self.azure_deployment:
            return self.azure_deployment
        return self.model or DEFAULT_MODELS.get(provider, "scripted")

    def missing_credentials(self) -> str | None:
        """Why the provider cannot start, naming the settings and variables to set."""
        provider = self.resolved_provider()
        if provider is None:
            return CREDENTIALS_HELP
        if provider == "anthropic" and not self.anthropic_api_key:
            return "The anthropic provider needs ANTHROPIC_API_KEY. " + CREDENTIALS_HELP
        if provider == "openai" and not (self.openai_api_key or self.openai_base_url):
            return (
                "The openai provider needs OPENAI_API_KEY or OPENAI_BASE_URL. " + CREDENTIALS_HELP
            )
        if provider == "azure" and not (self.azure_api_key and self.azure_endpoint):
            return (
                "The azure provider needs AZURE_OPENAI_API_KEY and AZURE_OPENAI_ENDPOINT (or "
                "the azureEndpoint setting), and a deployment: azureDeployment or the model "
                "name. " + CREDENTIALS_HELP
            )
        if provider == "scripted" and self.script is None:
            return (
                "The scripted provider needs a script: set AGENTLS_SCRIPT to a JSONL file, or "
                "pass `script` in the session settings."
            )
        return None


def default_home() -> Path:
    """AGENTLS_HOME, else $XDG_DATA_HOME/agentls, else ~/.local/share/agentls."""
    if os.environ.get("AGENTLS_HOME"):
        return Path(os.environ["AGENTLS_HOME"])
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "agentls"


_ENV = {
    "AGENTLS_PROVIDER": "provider",
    "AGENTLS_MODEL": "model",
    "ANTHROPIC_API_KEY": "anthropic_api_key",
    "ANTHROPIC_BASE_URL": "anthropic_base_url",
    "OPENAI_API_KEY": "openai_api_key",
    "OPENAI_BASE_URL": "openai_base_url",
    "AZURE_OPENAI_API_KEY": "azure_api_key",
    "AZURE_OPENAI_ENDPOINT": "azure_endpoint",
    "AZURE_OPENAI_DEPLOYMENT": "azure_deployment",
    "OPENAI_API_VERSION": "azure_api_version",
    "AGENTLS_HOME": "home",
    "AGENTLS_SCRIPT": "script",
    "AGENTLS_REQUEST_LOG": "request_log",
    "AGENTLS_OPENAI_API": "openai_api",
}
# Keys as clients and settings files spell them (camelCase) → field names.
_KEYS = {
    "provider": "provider",
    "model": "model",
    "permissionMode": "permission_mode",
    "maxTurns": "max_turns",
    "maxTokens": "max_tokens",
    "thinkingBudget": "thinking_budget",
    "contextWindow": "context_window",
    "vision": "vision",
    "idleTimeout": "idle_timeout",
    "modelRetries": "model_retries",
    "retryBudget": "retry_budget",
    "maxOutputTokens": "max_output_tokens",
    "reasoningEffort": "reasoning_effort",
    "openaiStreamUsage": "openai_stream_usage",
    "openaiMaxTokensField": "openai_max_tokens_field",
    "openaiApi": "openai_api",
    "prices": "prices",
    "readConcurrency": "read_concurrency",
    "nudgeLimit": "nudge_limit",
    "maxBudgetTokens": "max_budget_tokens",
    "maxBudgetUsd": "max_budget_usd",
    "stuckThreshold": "stuck_threshold",
    "todoWrite": "todo_write",
    "applyPatchTool": "apply_patch_tool",
    "permissionRulesScope": "permission_rules_scope",
    "subagentDepth": "subagent_depth",
    "maxSubagents": "max_subagents",
    "mcpToolTimeout": "mcp_tool_timeout",
    "disabledMcpServers": "disabled_mcp_servers",
    "editorDiagnostics": "editor_diagnostics",
    "diagnosticsWait": "diagnostics_wait",
    "mcpStartupTimeout": "mcp_startup_timeout",
    "detachedTurnTimeout": "detached_turn_timeout",
    "webFetchAllowPrivate": "web_fetch_allow_private",
    "webSearch": "web_search",
    "sandbox": "sandbox",
    "additionalDirectories": "additional_directories",
    "appendSystemPrompt": "append_system_prompt",
    "script": "script",
    "requestLog": "request_log",
    "anthropicBaseUrl": "anthropic_base_url",
    "openaiBaseUrl": "openai_base_url",
    "azureEndpoint": "azure_endpoint",
    "azureDeployment": "azure_deployment",
    "azureApiVersion": "azure_api_version",
    "maxLiveSessions": "max_live_sessions",
    "sessionIdleTimeout": "session_idle_timeout",
}


def _coerce(name: str, value: Any) -> Any:
    """The value converted to the field's type; ValueError says what was wrong."""
    default = getattr(Settings(), name)
    if name == "home":
        return Path(str(value))
    if name == "script":
        if isinstance(value, (str, list)):
            return value
        raise ValueError("must be a path or a list of script entries")
    if name == "provider" and value not in PROVIDERS:
        raise ValueError(f"must be one of {', '.join(PROVIDERS)}")
    if name == "permission_mode" and value not in PERMISSION_MODES:
        raise ValueError(f"must be one of {', '.join(PERMISSION_MODES)}")
    if name == "openai_api" and value not in OPENAI_APIS:
        raise ValueError(f"must be one of {', '.join(OPENAI_APIS)}")
    if name == "apply_patch_tool":
        if value != "auto" and not isinstance(value, bool):
            raise ValueError('must be "auto", true or false')
        return value
    if name == "prices":
        return _prices(value)
    if name == "detached_turn_timeout":
        # 0: the session's turns end with its last connection (`agentls run` asks this).
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ValueError("must be a number of seconds, 0 or more")
        return float(value)
    if name == "web_search":
        return parse_search_backend(value)
    if name in _CHOICES and value is not None and value not in _CHOICES[name]:
        raise ValueError(f"must be one of {', '.join(_CHOICES[name])}, or null")
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ValueError("must be true or false")
        return value
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError("must be an integer")
        return value
    if isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise ValueError("must be a positive number")
        return float(value)
    if isinstance(default, tuple):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError("must be a list of strings")
        return tuple(value)
    if name == "vision":
        if value is not None and not isinstance(value, bool):
            raise ValueError("must be true or false")
        return value
    if name == "max_budget_usd":
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0
        ):
            raise ValueError("must be a positive number of dollars")
        return None if value is None else float(value)
    if name in ("thinking_budget", "context_window", "max_output_tokens", "max_budget_tokens"):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ValueError("must be an integer")
        return value
    if value is not None and not isinstance(value, str):
        raise ValueError("must be a string")
    return value


_PRICE_KEYS = ("input", "output", "cacheRead", "cacheWrite")


def _prices(value: Any) -> dict[str, Price]:
    """`{model: {input, output, cacheRead?, cacheWrite?}}`, dollars per million tokens."""
    if not isinstance(value, dict):
        raise ValueError("must map model names to {input, output, cacheRead, cacheWrite}")
    prices = {}
    for model, entry in value.items():
        if not isinstance(entry, dict) or not {"input", "output"} <= entry.keys():
            raise ValueError(f"{model}: needs input and output (USD per million tokens)")
        numbers = [entry.get(key, 0) for key in _PRICE_KEYS]
        if not all(
            isinstance(n, (int, float)) and not isinstance(n, bool) and n >= 0 for n in numbers
        ):
            raise ValueError(f"{model}: prices must be numbers of 0 or more")
        prices[str(model)] = Price(*(float(n) for n in numbers))
    return prices


def apply_layer(
    settings: Settings, layer: Mapping[str, Any], source: str, problems: list[str]
) -> Settings:
    """`settings` updated by one layer of camelCase keys; unknown or bad keys are reported."""
    changes: dict[str, Any] = {}
    for key, value in layer.items():
        if key == "mcpServers":
            # Servers add up across layers (a later one replaces a server of its name).
            try:
                layer_servers = parse_servers(value, source, os.environ)
            except ValueError as exc:
                problems.append(f"{source}: mcpServers {exc}; ignored")
                continue
            base = changes.get("mcp_servers", settings.mcp_servers)
            changes["mcp_servers"] = merge_servers(base, layer_servers)
            continue
        if key == "permissions" and isinstance(value, dict):
            for rule_kind in ("allow", "deny", "ask"):
                if rule_kind in value:
                    _set(
                        changes,
                        rule_kind,
                        value[rule_kind],
                        f"{source}: permissions.{rule_kind}",
                        problems,
                    )
                if rule_kind in changes:
                    # Rules add up across layers: the shared file's and the personal one's
                    # both hold (deny beats ask beats allow whatever their layer).
                    earlier: tuple[str, ...] = getattr(settings, rule_kind)
                    added = (r for r in changes[rule_kind] if r not in earlier)
                    changes[rule_kind] = (*earlier, *added)
            continue
        if key == "sandbox":
            # Merged key by key: a layer that names only the mode keeps the paths.
            try:
                changes["sandbox"] = parse_sandbox(value, changes.get("sandbox", settings.sandbox))
            except ValueError as exc:
                problems.append(f"{source}: sandbox {exc}; this layer's sandbox is ignored")
            continue
        if key == "hooks":
            changes["hook_layers"] = (*settings.hook_layers, (source, value))
            continue
        name = _KEYS.get(key)
        if name is None:
            problems.append(f"{source}: unknown setting {key!r} ignored")
            continue
        _set(changes, name, value, f"{source}: {key}", problems)
    return replace(settings, **changes)


def _set(changes: dict[str, Any], name: str, value: Any, where: str, problems: list[str]) -> None:
    try:
        changes[name] = _coerce(name, value)
    except ValueError as exc:
        problems.append(f"{where} {exc}; the default is used")


def _read_json(path: Path, problems: list[str]) -> Mapping[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, json.JSONDecodeError) as exc:
        problems.append(f"{path}: not readable as JSON ({exc}); ignored")
        return {}
    if not isinstance(data, dict):
        problems.append(f"{path}: must hold a JSON object; ignored")
        return {}
    return data


def project_settings_file(cwd: Path) -> Path:
    """The project's settings file; its layer is named by this path."""
    return cwd / ".agentls" / "settings.json"


def local_settings_file(cwd: Path) -> Path:
    """The project's personal settings file (git-ignored), read after the shared one."""
    return cwd / ".agentls" / "settings.local.json"


def _local_layer(cwd: Path, problems: list[str]) -> Mapping[str, Any]:
    """The personal file's settings. Its hooks are not read: a repository could commit the
    file all the same, and only the shared file's hooks wait for the user's trust."""
    path = local_settings_file(cwd)
    layer = _read_json(path, problems)
    if "hooks" in layer:
        problems.append(f"{path}: hooks are read from {project_settings_file(cwd)} only; ignored")
        layer = {key: value for key, value in layer.items() if key != "hooks"}
    return layer


def load_settings(
    cwd: Path,
    env: Mapping[str, str],
    client_options: Mapping[str, Any] | None = None,
    problems: list[str] | None = None,
) -> Settings:
    """Settings for a workspace at `cwd`: files, then environment, then client options."""
    found: list[str] = [] if problems is None else problems
    home = Path(env["AGENTLS_HOME"]) if env.get("AGENTLS_HOME") else default_home()
    settings = Settings(home=home)
    settings = apply_layer(
        settings, _read_json(home / "settings.json", found), "user settings", found
    )
    mcp_json = _read_json(cwd / ".mcp.json", found)
    if "mcpServers" in mcp_json:
        servers = {"mcpServers": mcp_json["mcpServers"]}
        settings = apply_layer(settings, servers, str(cwd / ".mcp.json"), found)
    project = project_settings_file(cwd)
    settings = apply_layer(settings, _read_json(project, found), str(project), found)
    local = str(local_settings_file(cwd))
    settings = apply_layer(settings, _local_layer(cwd, found), local, found)
    env_changes = {}
    for var, name in _ENV.items():
        if env.get(var):
            try:
                env_changes[name] = _coerce(name, env[var])
            except ValueError as exc:
                found.append(f"{var} {exc}; ignored")
    settings = replace(settings, **env_changes)
    if client_options:
        settings = apply_layer(settings, client_options, "initializationOptions", found)
    return settings
