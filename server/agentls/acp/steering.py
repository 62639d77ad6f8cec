"""Queue and steer for ACP clients, which have neither: `/steer <text>` folds the text
into the running turn (as agent/submitMessage's `delivery: steer`), `/queue <text>` waits
behind it; `_meta.agentls.delivery` says the same without a command. Both commands are
advertised with the session's own in `available_commands_update`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from acp import RequestError
from acp import schema as acp

from agentls.names import DELIVERIES, Delivery

# The front end's own commands, never sent to the core (which has no /steer or /queue).
DELIVERY_COMMANDS: dict[str, tuple[Delivery, str]] = {
    "steer": ("steer", "Add to the running turn: the model reads it at its next step"),
    "queue": ("queue", "Send after the running turn ends (and after those already queued)"),
}


def delivery_commands() -> list[acp.AvailableCommand]:
    return [
        acp.AvailableCommand(
            name=name,
            description=about,
            input=acp.AvailableCommandInput(root=acp.UnstructuredCommandInput(hint="<message>")),
        )
        for name, (_delivery, about) in DELIVERY_COMMANDS.items()
    ]


def delivery_of(text: str, meta: Mapping[str, Any]) -> tuple[Delivery, str]:
    """How a prompt is delivered and its text without a leading `/steer` or `/queue`."""
    head, _space, rest = text.partition(" ")
    command = DELIVERY_COMMANDS.get(head[1:]) if head.startswith("/") else None
    if command is not None and rest.strip():
        return command[0], rest.strip()
    own = meta.get("agentls")
    delivery = own.get("delivery") if isinstance(own, dict) else None
    if delivery is None:
        return "queue", text
    for known in DELIVERIES:
        if known == delivery:
            return known, text
    problem = {"field": "_meta.agentls.delivery", "message": f"one of {', '.join(DELIVERIES)}"}
    raise RequestError.invalid_params(problem)
