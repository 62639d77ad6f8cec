"""Counts as a user reads them: "1 turn", "2 turns", "1,024 tokens".

Standard library only, and nothing imported: the warm `agentls run` prints with it.
"""

from __future__ import annotations


def counted(number: int, singular: str, plural: str | None = None) -> str:
    """`number` and the noun that agrees with it (the plural is `singular + "s"` unless given)."""
    noun = singular if number == 1 else (plural or singular + "s")
    return f"{number:,} {noun}"
