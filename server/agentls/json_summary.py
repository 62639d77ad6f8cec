"""A JSON value described for a model in a few lines: its shape (types, keys, lengths) and
per-field statistics (ranges, top values), bounded in size whatever the input.

Plain functions over decoded JSON, with no tool in sight: SummarizeData uses them, and
anything else that has to show a model some data can.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

SUMMARY_LEVELS = 3
SUMMARY_MAX_KEYS = 50
SUMMARY_MAX_FIELDS = 50
SUMMARY_KEY_NAMES = 10
TOP_VALUES = 5
DISTINCT_CAP = 10_000
PREVIEW_CHARS = 40
INDENT = "  "
JSON_TYPES = ("object", "array", "string", "number", "boolean", "null")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def json_type(value: Any) -> str:
    """The JSON type name of a decoded JSON value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


def _number(value: float) -> str:
    if not isinstance(value, int):
        return format(value, ".10g")
    try:
        return str(value)
    except ValueError:
        # Python refuses to print integers of more than 4,300 digits.
        return f"an integer of {value.bit_length():,} bits"


def _mean(numbers: Sequence[float]) -> str:
    try:
        return _number(sum(numbers) / len(numbers))
    except (OverflowError, ValueError):
        return "not computable (the numbers are too large)"


def _preview(text: str) -> str:
    if len(text) > PREVIEW_CHARS:
        text = text[:PREVIEW_CHARS] + "…"
    return json.dumps(text, ensure_ascii=False)


def _span(low: int, high: int) -> str:
    return f"{low:,}" if low == high else f"{low:,}–{high:,}"


def _key_name(key: str) -> str:
    return key if _IDENTIFIER.fullmatch(key) else json.dumps(key, ensure_ascii=False)


def _names(keys: Iterable[str], total: int) -> str:
    shown = ", ".join(_key_name(key) for key in itertools.islice(keys, SUMMARY_KEY_NAMES))
    more = total - SUMMARY_KEY_NAMES
    return shown + (f", … {more:,} more" if more > 0 else "")


def brief(value: Any) -> str:
    """A one-line description: a container's size, a scalar's type and value."""
    kind = json_type(value)
    if kind == "object":
        return f"object with {plural(len(value), 'key')}"
    if kind == "array":
        return f"array of {plural(len(value), 'item')}"
    if kind == "string":
        return f"string {_preview(value)}"
    if kind in ("number", "boolean"):
        return f"{kind} {json.dumps(value)}"
    return kind


@dataclass(slots=True)
class _ValueStats:
    """Statistics over many JSON values: type counts, and per type what varies."""

    types: Counter[str] = field(default_factory=Counter)
    numbers: list[float] = field(default_factory=list)
    strings: Counter[str] = field(default_factory=Counter)
    untracked_strings: int = 0
    string_lengths: list[int] = field(default_factory=list)
    booleans: Counter[bool] = field(default_factory=Counter)
    array_lengths: list[int] = field(default_factory=list)
    object_keys: dict[str, None] = field(default_factory=dict)

    def add(self, value: Any) -> None:
        """Count one value."""
        kind = json_type(value)
        self.types[kind] += 1
        if kind == "number":
            self.numbers.append(value)
        elif kind == "string":
            self._add_string(value)
        elif kind == "boolean":
            self.booleans[value] += 1
        elif kind == "array":
            self.array_lengths.append(len(value))
        elif kind == "object":
            self.object_keys.update(dict.fromkeys(value))

    def _add_string(self, value: str) -> None:
        self.string_lengths.append(len(value))
        # Distinct values are counted up to a cap, so memory stays bounded on huge arrays.
        if value in self.strings or len(self.strings) < DISTINCT_CAP:
            self.strings[value] += 1
        else:
            self.untracked_strings += 1

    def type_counts(self) -> str:
        """`string ×3, null ×1` in JSON_TYPES order, then any non-JSON types."""
        order = [*JSON_TYPES, *sorted(set(self.types) - set(JSON_TYPES))]
        return ", ".join(f"{kind} ×{self.types[kind]:,}" for kind in order if self.types[kind])

    def lines(self, *, with_keys: bool = True) -> list[str]:
        """One line per type that has something to say, in a fixed order."""
        lines = []
        if self.numbers:
            lines.append(self._number_line())
        if self.strings or self.untracked_strings:
            lines.append(self._string_line())
        if self.booleans:
            lines.append(
                f"booleans: true ×{self.booleans[True]:,}, false ×{self.booleans[False]:,}"
            )
        if self.array_lengths:
            lengths = self.array_lengths
            total = sum(lengths)
            lines.append(
                f"arrays: length {_span(min(lengths), max(lengths))} "
                f"({plural(total, 'item')} in total)"
            )
        if self.object_keys and with_keys:
            lines.append(f"objects: keys {_names(self.object_keys, len(self.object_keys))}")
        return lines

    def _number_line(self) -> str:
        low, high = min(self.numbers), max(self.numbers)
        return f"numbers: min {_number(low)}, max {_number(high)}, mean {_mean(self.numbers)}"

    def _string_line(self) -> str:
        distinct = len(self.strings)
        lengths = _span(min(self.string_lengths), max(self.string_lengths))
        if self.untracked_strings:
            counted = (
                f"over {DISTINCT_CAP:,} distinct; most common (of the first {DISTINCT_CAP:,} seen)"
            )
        elif distinct > 1 and distinct == len(self.string_lengths):
            examples = ", ".join(_preview(text) for text in itertools.islice(self.strings, 3))
            return (
                f"strings: {distinct:,} distinct (all different), e.g. {examples}; length {lengths}"
            )
        else:
            counted = f"{distinct:,} distinct; most common"
        ranked = sorted(self.strings.items(), key=lambda item: (-item[1], item[0]))
        top = ", ".join(f"{_preview(text)} ×{count:,}" for text, count in ranked[:TOP_VALUES])
        return f"strings: {counted} {top}; length {lengths}"


def _indented(lines: Iterable[str], depth: int = 1) -> list[str]:
    return [INDENT * depth + line for line in lines]


def _field_lines(objects: Sequence[dict[str, Any]]) -> list[str]:
    """Per-field statistics over objects: presence, types, and what varies per type."""
    fields: dict[str, _ValueStats] = {}
    for obj in objects:
        for key, value in obj.items():
            fields.setdefault(key, _ValueStats()).add(value)
    lines = [f"fields of its {plural(len(objects), 'object')}:"]
    for key, stats in itertools.islice(fields.items(), SUMMARY_MAX_FIELDS):
        presence = f"present in {sum(stats.types.values()):,}/{len(objects):,}"
        lines.append(f"{INDENT}{_key_name(key)}: {presence}; {stats.type_counts()}")
        lines.extend(_indented(stats.lines(), 2))
    if len(fields) > SUMMARY_MAX_FIELDS:
        lines.append(f"{INDENT}… and {len(fields) - SUMMARY_MAX_FIELDS:,} more fields")
    return lines


def _array_lines(items: Sequence[Any]) -> list[str]:
    stats = _ValueStats()
    for item in items:
        stats.add(item)
    header = f"array of {plural(len(items), 'item')}"
    if not items:
        return [header + " (empty)"]
    objects = [item for item in items if isinstance(item, dict)]
    lines = [f"{header}: {stats.type_counts()}"]
    lines.extend(_indented(stats.lines(with_keys=not objects)))
    if objects:
        lines.extend(_indented(_field_lines(objects)))
    return lines


def _object_lines(obj: dict[str, Any], levels: int) -> list[str]:
    lines = [f"object with {plural(len(obj), 'key')}"]
    for key, value in itertools.islice(obj.items(), SUMMARY_MAX_KEYS):
        described = describe(value, levels - 1)
        lines.append(f"{INDENT}{_key_name(key)}: {described[0]}")
        lines.extend(_indented(described[1:]))
    if len(obj) > SUMMARY_MAX_KEYS:
        lines.append(f"{INDENT}… and {len(obj) - SUMMARY_MAX_KEYS:,} more keys")
    return lines


def describe(value: Any, levels: int = SUMMARY_LEVELS) -> list[str]:
    """Summary lines for `value`, expanding containers `levels` deep; the first line is brief."""
    if levels <= 0:
        return [brief(value)]
    if isinstance(value, dict):
        return _object_lines(value, levels)
    if isinstance(value, list | tuple):
        return _array_lines(value)
    return [brief(value)]
