"""Facts about models by name prefix: the one lookup the context window and vision tables use.

Names are matched case-insensitively on the part after the last "/", so a model served
under a path ("openai/gpt-4o", "Qwen/Qwen2.5-72B") matches like its bare name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def by_model(model: str, table: Sequence[tuple[tuple[str, ...], T]], default: T) -> T:
    """The value of the first row whose prefixes start the model's name, else `default`."""
    name = model.lower().rsplit("/", 1)[-1]
    return next((value for prefixes, value in table if name.startswith(prefixes)), default)
