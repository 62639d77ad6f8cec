"""Markdown files with a front matter block: agent types and slash commands are written so.

    ---
    description: Reviews a diff
    tools: Read, Grep
    ---
    The body.

Only `key: value` lines are read (keys lower-cased, values stripped of surrounding quotes);
that is all these files need, and it keeps YAML out of the daemon.
"""

from __future__ import annotations


def split_front_matter(text: str) -> tuple[dict[str, str], str]:
    """The front matter's fields and the body (ValueError when the block is not closed)."""
    fields: dict[str, str] = {}
    if not text.startswith("---"):
        return fields, text
    head, sep, rest = text[3:].partition("\n---")
    if not sep:
        raise ValueError("front matter is not closed with ---")
    body = rest.split("\n", 1)[1] if "\n" in rest else ""
    for line in head.splitlines():
        key, colon, value = line.partition(":")
        if colon and key.strip():
            fields[key.strip().lower()] = value.strip().strip("\"'")
    return fields, body


def comma_list(value: str) -> tuple[str, ...]:
    """A front matter list: `a, b` or `[a, b]`, items stripped of quotes. A comma inside
    parentheses belongs to its item (`Bash(git diff:*)`-style rules may hold one)."""
    listed = value.strip()
    if listed.startswith("[") and listed.endswith("]"):
        listed = listed[1:-1]
    items, depth, start = [], 0, 0
    for index, char in enumerate(listed):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth <= 0:
            items.append(listed[start:index])
            start = index + 1
    items.append(listed[start:])
    return tuple(t.strip().strip("\"'") for t in items if t.strip())
