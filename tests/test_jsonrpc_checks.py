"""The edge's checks of a message body (agentls.lsp.jsonrpc): nesting depth, and strings
that are not Unicode, decided from the bytes without walking them in Python."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from agentls.json_text import is_unicode, may_hold_surrogates
from agentls.lsp.jsonrpc import MAX_DEPTH, InvalidMessage, parse_message


def _request(params: Any) -> bytes:
    message = {"jsonrpc": "2.0", "id": 1, "method": "agent/listSessions", "params": params}
    return json.dumps(message).encode()


def _nested(levels: int) -> Any:
    value: Any = "leaf"
    for level in range(levels):
        value = [value] if level % 2 else {"k": value}
    return value


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    return 0


def test_nesting_up_to_the_limit_is_taken_and_one_more_is_refused() -> None:
    # The message object itself is one level, so params may nest MAX_DEPTH - 1.
    assert parse_message(_request(_nested(MAX_DEPTH - 1)))["id"] == 1
    with pytest.raises(InvalidMessage) as refused:
        parse_message(_request(_nested(MAX_DEPTH)))
    assert refused.value.code == -32600
    assert refused.value.msg_id == 1


@pytest.mark.parametrize(
    "text",
    [
        '"' + "[" * (MAX_DEPTH + 5),  # an escaped quote, then brackets still in the string
        "\\" + "{" * (MAX_DEPTH + 5),  # an escaped backslash before them
        '\\"' + "[" * (MAX_DEPTH + 5) + '\\\\"',
    ],
)
def test_brackets_inside_strings_never_count(text: str) -> None:
    # Code sent in a message is full of quotes and brackets: none of it is nesting.
    assert parse_message(_request({"text": text, "more": [text, {"k": text}]}))["id"] == 1


def test_refused_exactly_when_the_parsed_value_nests_too_deep(long_run: bool) -> None:
    rng = random.Random(28)
    pieces = ['"', "\\", "[", "]", "{", "}", "a", "é", "\\\\", '\\"']

    def text() -> str:
        return "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))

    def value(levels: int) -> Any:
        if levels <= 0:
            return rng.choice([text(), 1, None, [], {}])
        items = [value(levels - 1), *(text() for _ in range(rng.randint(0, 2)))]
        rng.shuffle(items)
        return items if rng.random() < 0.5 else {f"{text()}{i}": v for i, v in enumerate(items)}

    for _ in range(2000 if long_run else 200):
        params = value(rng.randint(MAX_DEPTH - 6, MAX_DEPTH + 4))
        body = _request(params)
        too_deep = 1 + _depth(params) > MAX_DEPTH
        try:
            parse_message(body)
            refused = False
        except InvalidMessage as exc:
            assert exc.code == -32600
            refused = True
        assert refused == too_deep, body[:200]


def test_only_escaped_surrogates_can_make_a_string_that_is_not_unicode() -> None:
    lone, pair = {"text": "\ud800"}, {"text": "\U0001f600"}
    assert may_hold_surrogates(json.dumps(lone).encode())
    assert not is_unicode(lone)
    # A pair written escaped may hold one too, until the walk says it does not.
    assert may_hold_surrogates(json.dumps(pair).encode())
    assert is_unicode(json.loads(json.dumps(pair)))
    # Written as UTF-8 (or not at all), no string can hold a surrogate.
    assert not may_hold_surrogates(json.dumps(pair, ensure_ascii=False).encode())
    assert not may_hold_surrogates(json.dumps({"text": "plain \\u0041 é"}).encode())
