"""A structural JSON-RPC fuzzer: every field of every method's params, and of the envelope,
set to every JSON type, with what the daemon owes for each message.

Fields come from the params models themselves (agentls.api.REQUESTS and NOTIFICATIONS, the
lsprotocol types of pygls's built-in methods, the ACP SDK's schema), so a new method or
field is fuzzed without editing a list. A mutation replaces the value at one path (or
removes the key) in a valid seed; `Expect` says how the message must be answered.
"""

from __future__ import annotations

import enum
import json
import random
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import attrs
from pydantic import BaseModel

Path = tuple[str | int, ...]
# Codes a request with params of any shape may get (None: a result).
AGENT_CODES: frozenset[int | None] = frozenset(
    {None, -32602, 1001, 1002, 1003, 1004, 1005, 1006, 1008}
)
REMOVED = object()
# Stands for a string value whose UTF-8 is broken on the wire (JSON cannot say it).
NOT_UTF8 = "\x00not-utf8\x00"


def palette(long_run: bool) -> list[tuple[str, Any]]:
    """One value of each JSON type and of each hostile kind, named."""
    huge = 200_000 if long_run else 5_000
    deep: Any = []
    for _ in range(100):
        deep = [deep]
    shallow: Any = {}
    for _ in range(40):
        shallow = {"a": shallow}
    return [
        ("object", {"k": "v"}),
        ("empty object", {}),
        ("array", [1, "x", None]),
        ("empty array", []),
        ("float", 7100000.5),
        ("true", True),
        ("false", False),
        ("null", None),
        ("huge integer", 10**30),
        ("negative integer", -(10**20)),
        ("huge float", 1e308),
        ("empty string", ""),
        ("huge string", "a" * huge),
        ("long absolute path", "/" + "a" * huge),
        ("id-shaped huge", "sess_" + "a" * huge),
        ("path escape", "../../../etc/passwd"),
        ("NUL", "a\x00b"),
        ("lone surrogate", "\ud800"),
        ("unicode", "é😀\u202e"),
        ("non-UTF-8 bytes", NOT_UTF8),
        ("nested 40", shallow),
        ("nested 100", deep),
        ("removed", REMOVED),
    ]


# --- deriving seeds and paths ----------------------------------------------------------


def schema_seed(model: type[BaseModel], samples: dict[str, Any]) -> tuple[Any, list[Path]]:
    """A valid-looking params object for `model`, and every path into it worth mutating."""
    schema = model.model_json_schema(by_alias=True)
    defs = schema.get("$defs", {})
    paths: list[Path] = []
    seed = _from_schema(schema, defs, (), paths, samples, depth=0)
    return seed, paths


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = defs[node["$ref"].rsplit("/", 1)[1]]
    if "anyOf" in node or "oneOf" in node:
        options = [_resolve(o, defs) for o in node.get("anyOf", node.get("oneOf", []))]
        concrete = [o for o in options if o.get("type") != "null"]
        return concrete[0] if concrete else options[0]
    if "allOf" in node and len(node["allOf"]) == 1:
        return _resolve(node["allOf"][0], defs)
    return node


def _from_schema(
    node: dict[str, Any],
    defs: dict[str, Any],
    path: Path,
    paths: list[Path],
    samples: dict[str, Any],
    depth: int,
) -> Any:
    node = _resolve(node, defs)
    if "const" in node:
        return node["const"]
    if "enum" in node:
        return node["enum"][0]
    kind = node.get("type")
    if kind == "object" or "properties" in node:
        value: dict[str, Any] = {}
        for name, child in node.get("properties", {}).items():
            paths.append((*path, name))
            if depth < 3:
                value[name] = _from_schema(child, defs, (*path, name), paths, samples, depth + 1)
        return value
    if kind == "array":
        item = node.get("items", {})
        if depth < 3 and _resolve(item, defs).get("type") == "object":
            paths.append((*path, 0))
            return [_from_schema(item, defs, (*path, 0), paths, samples, depth + 1)]
        return []
    name = str(path[-1]) if path else ""
    if name in samples:
        return samples[name]
    return {"string": "x", "integer": 1, "number": 1.0, "boolean": False}.get(str(kind))


def attrs_seed(cls: Any, samples: dict[str, Any]) -> tuple[Any, list[Path]]:
    """The same for an lsprotocol attrs class (pygls's built-in methods' params)."""
    paths: list[Path] = []
    return _from_type(cls, (), paths, samples, 0), paths


def _from_type(tp: Any, path: Path, paths: list[Path], samples: dict[str, Any], depth: int) -> Any:
    origin = typing.get_origin(tp)
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    name = str(path[-1]) if path else ""
    if name in samples:
        return samples[name]
    if origin is typing.Union or str(origin) == "types.UnionType":
        return _from_type(args[0], path, paths, samples, depth) if args else None
    if origin is typing.Literal:
        return typing.get_args(tp)[0]
    if origin in (list, tuple) or str(origin).endswith("Sequence'>"):
        if args and attrs.has(args[0]) and depth < 3:
            paths.append((*path, 0))
            return [_from_type(args[0], (*path, 0), paths, samples, depth + 1)]
        return []
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return next(iter(tp)).value
    if attrs.has(tp):
        hints = typing.get_type_hints(tp)
        value: dict[str, Any] = {}
        for field in attrs.fields(tp):
            key = _camel(field.name)
            paths.append((*path, key))
            if (field.default is attrs.NOTHING or key in samples) and depth < 3:
                value[key] = _from_type(hints[field.name], (*path, key), paths, samples, depth + 1)
        return value
    return {str: "x", int: 1, float: 1.0, bool: False}.get(tp, {})


def _camel(name: str) -> str:
    head, *rest = name.rstrip("_").split("_")
    return head + "".join(part.title() for part in rest)


# --- mutations and what they are owed ----------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One method's seed: a request (answered) or a notification (never answered)."""

    method: str
    seed: Any
    paths: list[Path]
    request: bool
    codes: frozenset[int | None]


@dataclass
class Message:
    """One message to send, and what the daemon owes for it."""

    body: bytes
    label: str
    # "id": an answer with this id; "null": an error answer with id null; "none": nothing.
    owed: str
    msg_id: Any
    codes: frozenset[int | None]


def set_at(value: Any, path: Path, new: Any) -> Any:
    """A copy of `value` with `new` at `path` (REMOVED deletes the key)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict) and isinstance(head, str):
        copy = dict(value)
        if rest:
            copy[head] = set_at(copy.get(head, {}), rest, new)
        elif new is REMOVED:
            copy.pop(head, None)
        else:
            copy[head] = new
        return copy
    if isinstance(value, list) and isinstance(head, int):
        copy_list = list(value) or [{}]
        if not rest and new is REMOVED:
            return copy_list[1:]
        copy_list[0] = set_at(copy_list[0], rest, new)
        return copy_list
    return value


def encode(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    # A marker string stands for bytes no JSON encoder writes: a string that is not UTF-8.
    return body.replace(json.dumps(NOT_UTF8)[1:-1].encode(), b"\xff\xfe")


class Generator:
    """Messages for `cases`: each field of each method, then the envelope, at every value."""

    def __init__(
        self, cases: list[Case], rng: random.Random, long_run: bool, deep_refused: bool
    ) -> None:
        self.cases = cases
        self.rng = rng
        self.values = palette(long_run)
        # LSP framing refuses bodies nested deeper than 64 levels (agentls.lsp.jsonrpc).
        self.deep_refused = deep_refused
        self._serial = 0

    def next_id(self) -> str:
        self._serial += 1
        return f"fz{self._serial}"

    def all_mutations(self) -> Iterator[tuple[Case, str, Path, str, Any]]:
        """(case, "params" | "envelope", path, value name, value) for every combination."""
        for case in self.cases:
            for path in case.paths:
                for name, value in self.values:
                    yield case, "params", path, name, value
            for key in ("jsonrpc", "id", "method", "params"):
                if key == "id" and not case.request:
                    continue
                for name, value in self.values:
                    yield case, "envelope", (key,), name, value
        for key in ("jsonrpc", "id", "result", "error"):
            for name, value in self.values:
                yield _RESPONSE, "response", (key,), name, value

    def build(self, case: Case, where: str, path: Path, name: str, value: Any) -> Message:
        """The message for one mutation, with what it is owed."""
        label = f"{case.method} {where} {'.'.join(map(str, path))} = {name}"
        if where == "response":
            response = {"jsonrpc": "2.0", "id": 900_000 + self._serial, "result": None}
            return self._owed(set_at(response, path, value), label, None, response=True)
        msg_id = self.next_id() if case.request else None
        params = case.seed if where == "envelope" else set_at(case.seed, path, value)
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": case.method, "params": params}
        if case.request:
            message["id"] = msg_id
        if where == "envelope":
            message = set_at(
                message, path, _unique(value, self._serial) if path == ("id",) else value
            )
        return self._owed(message, label, case, response=False)

    def _owed(
        self, message: dict[str, Any], label: str, case: Case | None, response: bool
    ) -> Message:
        body = encode(message)
        msg_id = message.get("id")
        if b"\xff\xfe" in body:
            return Message(body, label, "null", None, frozenset({-32700}))
        is_request = "method" in message and "id" in message
        if response or "method" not in message:
            if "method" not in message and not {"id", "result", "error"} & message.keys():
                return Message(body, label, "null", None, frozenset({-32600}))
            return Message(body, label, "none", None, frozenset())
        if not is_request:
            return Message(body, label, "none", None, frozenset())
        valid_id = isinstance(msg_id, str | int) and not isinstance(msg_id, bool)
        if not valid_id and msg_id is not None:
            return Message(body, label, "null", None, frozenset({-32600}))
        codes = self._request_codes(message, case)
        if msg_id is None:
            return Message(body, label, "null", None, codes)
        return Message(body, label, "id", msg_id, codes)

    def _request_codes(self, message: dict[str, Any], case: Case | None) -> frozenset[int | None]:
        method, params = message.get("method"), message.get("params")
        if message.get("jsonrpc") != "2.0" or not isinstance(method, str):
            return frozenset({-32600})
        if params is not None and not isinstance(params, dict | list):
            return frozenset({-32600})
        if self.deep_refused and _depth(message) > 64:
            return frozenset({-32600})
        if case is None or method != case.method:
            return frozenset({-32601})
        return case.codes


def _unique(value: Any, serial: int) -> Any:
    """A request id of the same JSON type as `value`, but never sent before."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return value
    return f"{value}#{serial}" if isinstance(value, str) else value + serial


_RESPONSE = Case("(response)", None, [], False, frozenset())


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0
