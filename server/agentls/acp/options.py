"""A session's permission modes and models as ACP offers them: session modes (the older
clients' picker) and config options (`mode` and `model` selects), kept in step."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from acp import schema as acp

from agentls.names import PERMISSION_MODES, PermissionMode

MODE_NAMES: dict[PermissionMode, tuple[str, str]] = {
    "default": ("Default", "Ask before file changes, commands and fetches"),
    "acceptEdits": ("Accept edits", "File changes in the workspace run without asking"),
    "plan": ("Plan", "Read and plan only: no changes, no commands that write"),
    "bypassPermissions": ("Bypass permissions", "Every tool runs without asking"),
}


def mode_of(value: str) -> PermissionMode | None:
    """The permission mode a mode id names, or None."""
    for mode in PERMISSION_MODES:
        if mode == value:
            return mode
    return None


def mode_state(current: PermissionMode) -> acp.SessionModeState:
    return acp.SessionModeState(
        current_mode_id=current,
        available_modes=[
            acp.SessionMode(id=mode, name=name, description=about)
            for mode, (name, about) in MODE_NAMES.items()
        ],
    )


def config_options(
    mode: PermissionMode, model: str, models: Sequence[tuple[str, str]]
) -> list[acp.SessionConfigOptionSelect | acp.SessionConfigOptionBoolean]:
    """The mode and model selects; `models` are (id, display name) pairs, the current
    model among them or not."""
    listed = list(models)
    if all(model_id != model for model_id, _name in listed):
        listed.insert(0, (model, model))
    modes = [(m, name, about) for m, (name, about) in MODE_NAMES.items()]
    return [
        _select("mode", "Mode", mode, modes),
        _select("model", "Model", model, [(m, name, None) for m, name in listed]),
    ]


def _select(
    option_id: Literal["mode", "model"],
    name: str,
    current: str,
    choices: Sequence[tuple[str, str, str | None]],
) -> acp.SessionConfigOptionSelect:
    return acp.SessionConfigOptionSelect(
        type="select",
        id=option_id,
        name=name,
        category=option_id,
        current_value=current,
        options=[
            acp.SessionConfigSelectOption(value=value, name=shown, description=about)
            for value, shown, about in choices
        ],
    )
