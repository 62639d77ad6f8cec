"""The one place where core dataclasses become wire JSON (camelCase keys, no nulls)."""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any


@cache
def camel(name: str) -> str:
    """`tool_use_id` -> `toolUseId`."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@cache
def _field_names(cls: type) -> tuple[tuple[str, str], ...]:
    return tuple((f.name, camel(f.name)) for f in dataclasses.fields(cls))


def to_wire(value: Any) -> Any:
    """Dataclasses become camelCase dicts without None fields; dicts pass through as they are.

    Dict keys are left alone on purpose: tool inputs (`file_path`, `-i`) must reach the
    client exactly as the model wrote them.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for name, key in _field_names(type(value)):
            item = getattr(value, name)
            if item is not None:
                out[key] = to_wire(item)
        return out
    if isinstance(value, (list, tuple)):
        return [to_wire(item) for item in value]
    return value
